/**
 * The QuickJS WebAssembly module, loaded once per thread on first use: its packages are imported
 * then too, so that a daemon whose hooks have no Transform never loads them.
 */
import type { newQuickJSWASMModuleFromVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';

type Variant = Parameters<typeof newQuickJSWASMModuleFromVariant>[0];

let module: Promise<QuickJSWASMModule> | undefined;

async function load(): Promise<QuickJSWASMModule> {
  const [{ default: variant }, core] = await Promise.all([
    import('@jitl/quickjs-wasmfile-release-sync'),
    import('quickjs-emscripten-core'),
  ]);
  // The package's types describe its CommonJS build; under ESM the default export is the variant.
  return core.newQuickJSWASMModuleFromVariant(variant as unknown as Variant);
}

export function quickjs(): Promise<QuickJSWASMModule> {
  module ??= load();
  return module;
}
