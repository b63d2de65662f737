// The README's lines an app developer writes, compiled against the built
// package's types as an app imports it (npm run typecheck).
import { Herald } from "@heraldpush/sdk";
import { HeraldError } from "@heraldpush/sdk";

declare const fcmToken: string;
declare const pushId: string;

export async function readme(): Promise<void> {
  const herald = Herald.init({ baseUrl: "https://push.example.com", apiKey: "hk_0123456789abcdefghijklmnopqrstuv" });
  await herald.setUserId("user-1");
  await herald.registerPushToken(fcmToken, { platform: "web" });
  await herald.setConsent({ marketing: true });
  await herald.reportOpened(pushId);
}

export async function errors(herald: Herald): Promise<string | undefined> {
  try {
    await herald.setTags({ plan: "gold", visits: 3, beta: null });
  } catch (e) {
    if (e instanceof HeraldError && e.code === "ERR-AB-SDK-31") {
      return e.details.map((d) => d.field).join(",");
    }
  }
  return undefined;
}
