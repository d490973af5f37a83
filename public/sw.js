/*
 * ToolStore's service worker: shows the approval notifications sent by Web Push and opens the
 * card when one is tapped (focusing a console tab that already shows it). It caches nothing.
 */
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: "ToolStore", body: event.data ? event.data.text() : "" };
  }
  const url =
    typeof data.url === "string" && data.url.startsWith(self.location.origin) ? data.url : "/approvals";
  event.waitUntil(
    self.registration.showNotification(data.title || "ToolStore: approval needed", {
      body: data.body || "",
      tag: data.tag || "toolstore",
      renotify: true,
      requireInteraction: true,
      icon: "/icons/icon-192.png",
      badge: "/icons/badge-96.png",
      data: { url },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || "/approvals", self.location.origin).href;
  event.waitUntil(
    (async () => {
      const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const same = tabs.find((t) => t.url === url);
      if (same) return same.focus();
      const any = tabs.find((t) => new URL(t.url).origin === self.location.origin);
      if (any && "navigate" in any) {
        await any.navigate(url);
        return any.focus();
      }
      return self.clients.openWindow(url);
    })(),
  );
});
