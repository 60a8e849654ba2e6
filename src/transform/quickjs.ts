/** The QuickJS WebAssembly module, loaded once per thread on first use. */
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';

type Variant = Parameters<typeof newQuickJSWASMModuleFromVariant>[0];

let module: Promise<QuickJSWASMModule> | undefined;

export function quickjs(): Promise<QuickJSWASMModule> {
  // The package's types describe its CommonJS build; under ESM the default export is the variant.
  module ??= newQuickJSWASMModuleFromVariant(variant as unknown as Variant);
  return module;
}
