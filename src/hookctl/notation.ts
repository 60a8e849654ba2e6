/**
 * One notation for a delivery, in `tail`, `deliveries` and the man page (as `stripe listen`
 * draws it): the triggering request with the status its upstream answered in brackets, then the
 * callback hookd sent (`-->`) and the receiver's answer to it (`<--`):
 *
 *     GET /repositories/r1/timeseries/ts1/data [404]  --> POST https://cb.example/h  <-- 200
 *
 * `[-]`: no upstream status (a BeforeCompletion hook fires before the answer exists).
 */

export interface TriggerLike {
  /** Absent from an older hookd's answers: a request. */
  Kind?: 'request' | 'notification' | undefined;
  Method?: string | undefined;
  Path?: string | undefined;
  StatusCode?: number | null | undefined;
  /** A notification's event (`hook.disabled`…). */
  Event?: string | undefined;
}

/**
 * `GET /path [404]`: the request that fired the hook, and its upstream's status;
 * `notification hook.disabled`: the event a notification endpoint's delivery tells of.
 */
export function triggerText(t: TriggerLike | undefined): string {
  if (!t) return '';
  if (t.Kind === 'notification') return `notification ${t.Event ?? ''}`.trim();
  const req = `${t.Method ?? ''} ${t.Path ?? ''}`.trim();
  return `${req} [${t.StatusCode != null ? t.StatusCode : '-'}]`;
}

/**
 * `--> POST https://…`: the callback request hookd sent; `--> amqp://…` a message to a broker
 * (published, so no method).
 */
export function callbackText(method: string | undefined, url: string | undefined): string {
  const web = url === undefined || /^https?:/i.test(url);
  const text = `${web ? (method ?? '') : ''} ${url ?? ''}`.trim();
  return text ? `--> ${text}` : '';
}

/**
 * `<-- 200`, `<-- connection refused`: the receiver's answer to the callback; a broker's receipt
 * in words (`<-- confirmed by 127.0.0.1:5672, exchange ts.events`) where there is no HTTP status.
 */
export function answerText(
  statusCode: number | null | undefined,
  error: string | null | undefined,
  receipt?: string | null,
): string {
  if (statusCode != null) return `<-- ${statusCode}`;
  if (error) return `<-- ${error}`;
  if (receipt) return `<-- ${receipt}`;
  return '';
}
