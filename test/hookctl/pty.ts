import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { HOOKCTL_BIN } from '../helpers/hookd.js';
import { type RunResult, runProcess } from './helpers.js';

// The real hookctl binary on a real pseudo-terminal: stdin, stdout and stderr are all the pty
// (a child of a test has none otherwise). Python's pty module does the forking; its output is
// what the terminal showed (stdout and stderr together, with the echo of what was typed).

// python3 wherever PATH finds it (pyenv, /usr/local, /usr), then the usual places.
const PYTHON = [
  ...(process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'python3')),
  '/usr/bin/python3',
  '/usr/local/bin/python3',
].find((p) => existsSync(p));

const DRIVER = `
import fcntl, os, pty, struct, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 50, int(os.environ.get('PTY_COLUMNS', '200')), 0, 0))
data = os.environ.get('PTY_INPUT', '')
after = os.environ.get('PTY_INPUT_AFTER', '').encode()
if data and not after:
    time.sleep(float(os.environ.get('PTY_DELAY', '0.8')))
    os.write(fd, data.encode())
    data = ''
out = b''
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if data and after in out:
        os.write(fd, data.encode())
        data = ''
sys.stdout.buffer.write(out)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, 'waitstatus_to_exitcode') else status >> 8)
`;

/** Why a pty test is skipped here, or undefined when it can run. */
export function ptyUnavailable(): string | undefined {
  return PYTHON ? undefined : 'no python3 on PATH to drive a pseudo-terminal (apt-get install python3)';
}

/**
 * Runs `hookctl ARGS` on a pseudo-terminal; `input` is typed after a short delay, or once the
 * terminal has shown `inputAfter`.
 */
export function hookctlPty(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; inputAfter?: string; columns?: number; timeoutMs?: number },
): Promise<RunResult & { screen: string }> {
  const env: NodeJS.ProcessEnv = {
    ...opts.env,
    TERM: 'xterm-256color',
    PTY_COLUMNS: String(opts.columns ?? 200),
    ...(opts.input !== undefined && { PTY_INPUT: opts.input }),
    ...(opts.inputAfter !== undefined && { PTY_INPUT_AFTER: opts.inputAfter }),
  };
  return runProcess(PYTHON!, ['-c', DRIVER, process.execPath, HOOKCTL_BIN, ...args], {
    env,
    timeoutMs: opts.timeoutMs ?? 30000,
  }).then((r) => ({ ...r, screen: r.stdout.replace(/\r\n/g, '\n') }));
}

/** Terminal text without colour escapes. */
export function plain(s: string): string {
  return s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
}
