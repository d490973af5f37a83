import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { Providers } from "./_lib/providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "ToolStore", template: "%s · ToolStore" },
  description: "Local-first console and playground for agent capabilities",
  icons: { icon: "/favicon.svg", apple: "/icons/icon-192.png" },
  appleWebApp: { capable: true, title: "ToolStore", statusBarStyle: "default" },
};

export const viewport: Viewport = { themeColor: "#3b5bdb" };

// Applied before paint so a dark-theme user never sees a light flash.
const themeScript = `try{var t=localStorage.getItem("toolstore-theme")||(matchMedia("(prefers-color-scheme: dark)").matches?"dark":"light");document.documentElement.dataset.theme=t}catch(e){}`;

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: constant inline script, no user data */}
        <script dangerouslySetInnerHTML={{ __html: themeScript }} />
      </head>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
