import type { MetadataRoute } from "next";

/** The web app manifest: the console installs as an app, so Web Push works on phones (iOS needs it). */
export default function manifest(): MetadataRoute.Manifest {
  return {
    name: "ToolStore",
    short_name: "ToolStore",
    description: "Approve agent capability calls, live",
    start_url: "/approvals",
    scope: "/",
    display: "standalone",
    background_color: "#ffffff",
    theme_color: "#3b5bdb",
    icons: [
      { src: "/icons/icon-192.png", sizes: "192x192", type: "image/png" },
      { src: "/icons/icon-512.png", sizes: "512x512", type: "image/png" },
      { src: "/icons/maskable-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
    ],
  };
}
