"use client";
/**
 * Web Push on this device: registers the service worker (public/sw.js), subscribes with the
 * server's VAPID key and stores the subscription; off unsubscribes. The state shown is this
 * browser's own subscription, so each device is switched on by itself.
 */
import { useMutation } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "@/app/_lib/trpc";

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

function deviceName(): string {
  const ua = navigator.userAgent;
  const os = /Android/.test(ua)
    ? "Android"
    : /iPhone|iPad/.test(ua)
      ? "iOS"
      : /Mac/.test(ua)
        ? "macOS"
        : /Windows/.test(ua)
          ? "Windows"
          : "Linux";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrome\//.test(ua)
        ? "Chrome"
        : "Safari";
  return `${browser} on ${os}`;
}

async function registration(): Promise<ServiceWorkerRegistration> {
  await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  return navigator.serviceWorker.ready;
}

export function PushToggle({
  vapidPublicKey,
  onChange,
}: {
  vapidPublicKey: string | null;
  onChange: () => void;
}) {
  const trpc = useTRPC();
  const subscribe = useMutation(trpc.notifications.subscribePush.mutationOptions({ onSuccess: onChange }));
  const unsubscribe = useMutation(
    trpc.notifications.unsubscribePush.mutationOptions({ onSuccess: onChange }),
  );
  const [supported, setSupported] = useState<boolean | null>(null);
  const [on, setOn] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const ok = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
    setSupported(ok);
    if (!ok) return;
    void navigator.serviceWorker.getRegistration("/").then(async (reg) => {
      setOn(!!(await reg?.pushManager.getSubscription()));
    });
  }, []);

  async function toggle(next: boolean) {
    setBusy(true);
    setError(null);
    try {
      const reg = await registration();
      if (next) {
        if (!vapidPublicKey) throw new Error("the server has no push key yet; reload in a moment");
        if ((await Notification.requestPermission()) !== "granted") {
          throw new Error(
            "notifications are blocked for this site: allow them in the browser's site settings",
          );
        }
        const sub = await reg.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(vapidPublicKey),
        });
        const json = sub.toJSON() as { endpoint: string; keys: { p256dh: string; auth: string } };
        await subscribe.mutateAsync({ endpoint: json.endpoint, keys: json.keys, deviceName: deviceName() });
        setOn(true);
      } else {
        const sub = await reg.pushManager.getSubscription();
        if (sub) {
          await unsubscribe.mutateAsync({ endpoint: sub.endpoint });
          await sub.unsubscribe();
        }
        setOn(false);
      }
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  if (supported === false) {
    return (
      <p className="muted">
        This browser cannot receive push notifications. Install the console as an app, or use a webhook or
        email.
      </p>
    );
  }
  return (
    <div className="stack" style={{ gap: 6 }}>
      <label className="check">
        <input
          type="checkbox"
          checked={on}
          disabled={busy || supported === null}
          onChange={(e) => void toggle(e.target.checked)}
        />
        Push notifications on this device
      </label>
      {error && (
        <p className="error-text" role="alert">
          Could not turn push {on ? "off" : "on"}: {error}
        </p>
      )}
    </div>
  );
}
