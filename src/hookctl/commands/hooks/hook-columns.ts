import { HOOK_TYPES } from '../../../hook/index.js';
import { withoutPassword } from '../../../util/index.js';
import type { HookView } from '../../api-views.js';
import type { Column, Format } from '../../output.js';

/** `0` → `BeforeCompletion`; an unknown number stays a number. */
export function typeName(type: number): string {
  return HOOK_TYPES.find((t) => t.Type === type)?.Name ?? String(type);
}

/**
 * The columns of `list` (and of `get -o table`); `wide` adds the status lists, PERSIST, MODIFIED,
 * CALLBACK METHOD, DISABLED. NAME is always there when `piped` (scripts cut by position, and a
 * first hook given a Name must not shift the columns after it); on a terminal only when some
 * row has one.
 */
export function hookColumns(
  format: Format,
  rows: readonly HookView[] = [],
  piped = false,
): Column<HookView>[] {
  const columns: Column<HookView>[] = [
    { header: 'ID', value: (h) => h.Id, paint: (t, _h, c) => c.cyan(t) },
    ...(piped || rows.some((h) => typeof h.Name === 'string')
      ? [{ header: 'NAME', value: (h: HookView) => (typeof h.Name === 'string' ? h.Name : '') }]
      : []),
    { header: 'TYPE', value: (h) => typeName(h.Type) },
    { header: 'METHODS', value: (h) => (h.Methods ?? []).join(',') },
    { header: 'PATTERN', value: (h) => h.PathPattern, shrink: true },
    // Tables show no password (docs/DECISIONS.md "Where credentials are shown"); -o json does.
    { header: 'CALLBACK', value: (h) => withoutPassword(h.Callback), shrink: true },
    {
      header: 'STATE',
      value: (h) => h.State ?? '',
      paint: (t, _h, c) => (t === 'active' ? c.green(t) : t === 'disabled' ? c.red(t) : t),
    },
  ];
  if (format === 'wide') {
    columns.push(
      { header: 'WHITELIST', value: (h) => (h.StatusCodeWhiteList ?? []).join(',') },
      { header: 'BLACKLIST', value: (h) => (h.StatusCodeBlackList ?? []).join(',') },
      { header: 'PERSIST', value: (h) => (h.Persist === false ? 'false' : 'true') },
      { header: 'MODIFIED', value: (h) => h.Modified ?? '' },
      { header: 'CALLBACK METHOD', value: (h) => h.CallbackMethod ?? 'POST' },
      {
        header: 'DISABLED',
        value: (h) =>
          h.State === 'disabled' ? `${h.DisabledAt ?? ''} ${h.DisabledReason ?? ''}`.trim() : '',
        shrink: true,
      },
    );
  }
  return columns;
}
