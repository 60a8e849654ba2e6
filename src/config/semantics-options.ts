/** Issue 24's options as load-config reads them: the egress proxy (and endpoint verification). */
import { proxyUrlProblem } from '../egress/egress-proxy.js';
import type { HookdConfig } from './config.js';

type Get = (k: string) => { value: unknown } | undefined;
type Fail = (k: string, rule: string) => never;

export function semanticsOptions(
  get: Get,
  fail: Fail,
): Pick<HookdConfig, 'callbackProxy' | 'callbackProxyCredentialsFile' | 'callbackVerification'> {
  const proxy = get('callbackProxy');
  if (proxy !== undefined) {
    if (typeof proxy.value !== 'string')
      fail('callbackProxy', 'must be a URL such as http://proxy.internal:3128');
    const problem = proxyUrlProblem(proxy.value);
    if (problem) fail('callbackProxy', problem);
  }
  const file = get('callbackProxyCredentialsFile');
  if (file !== undefined && (typeof file.value !== 'string' || file.value === '')) {
    fail('callbackProxyCredentialsFile', 'must be the path of a file holding user:password');
  }
  if (file !== undefined && proxy === undefined) {
    fail('callbackProxyCredentialsFile', 'needs callbackProxy (--callback-proxy) as well');
  }
  const verification = get('callbackVerification');
  if (verification !== undefined && verification.value !== 'off' && verification.value !== 'cloudevents') {
    fail('callbackVerification', 'must be off or cloudevents');
  }
  return {
    ...(verification !== undefined && { callbackVerification: verification.value as 'off' | 'cloudevents' }),
    ...(proxy !== undefined && { callbackProxy: proxy.value as string }),
    ...(file !== undefined && { callbackProxyCredentialsFile: file.value as string }),
  };
}
