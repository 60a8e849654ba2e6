/**
 * The mark of a test event (the console's "Send a test event"): a header on its
 * callback, so receivers can tell a test from real traffic, and by which the delivery log shows
 * it (`Test: true` in the API, a "test" badge in the console). Kept with the request, so it needs
 * no column of its own.
 */
export const TEST_HEADER = 'hookd-test';

/** Whether a stored delivery's request is a test event's. */
export function isTestRequest(headers: Record<string, string>): boolean {
  for (const k in headers) if (k.toLowerCase() === TEST_HEADER) return headers[k] === 'true';
  return false;
}
