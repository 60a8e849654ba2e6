// Loaded into every test file's process (scripts/run-tests.js passes it to `node --test`, which
// hands its flags to each file's process). A file's process sends its results to the runner over
// its stdout, a pipe, which Node writes without blocking; `--test-force-exit` then exits the
// process with results still buffered, and the runner reports fewer tests than ran, with no
// failure (nodejs/node#64833). Blocking writes reach the pipe before the exit, so every result
// does.
const handle = process.stdout._handle;
if (handle && typeof handle.setBlocking === 'function') handle.setBlocking(true);
globalThis[Symbol.for('hookd.test.stdoutBlocking')] =
  handle !== undefined && typeof handle.setBlocking === 'function';
