/**
 * The sealed marker's table and triggers in PostgreSQL (pg-sealed-marker.ts reads and claims
 * it): a migration's text, so that the migrations need nothing of the database's code.
 */
import { CLEAR_MARKER, KEEPS_MARKER, SEALED_MARKER_TABLE } from '../sealed-marker.js';
import { HOOK_DOC_WITH_CREDENTIALS, URL_WITH_CREDENTIALS } from '../secret-codec.js';
import { LOCK_CLASS, LOCKS } from './pg-common.js';

const fn = (name: string, keeps: string) => `
  CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_advisory_xact_lock_shared(${LOCK_CLASS}, ${LOCKS.sealedMarker});
    ${CLEAR_MARKER} AND NOT (${keeps});
    RETURN NULL;
  END $$;`;

const trigger = (table: string, what: string, on: string, guard: string | undefined) => `
  CREATE TRIGGER ${table}_sealed AFTER INSERT OR UPDATE OF ${on} ON ${table} FOR EACH ROW
    ${guard === undefined ? '' : `WHEN (${guard})`} EXECUTE FUNCTION hookd_sealed_${what}();`;

/** The migration that adds the marker (unset: the first start walks). */
export const SEALED_MARKER_SQL = `
  CREATE TABLE ${SEALED_MARKER_TABLE} (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    key TEXT,
    sealed INTEGER NOT NULL DEFAULT 0,
    gen BIGINT NOT NULL DEFAULT 0
  );
  INSERT INTO ${SEALED_MARKER_TABLE} (one) VALUES (1);
  ${fn('hookd_sealed_secret', KEEPS_MARKER.secret('NEW.secret', 'NEW.previous'))}
  ${fn('hookd_sealed_doc', KEEPS_MARKER.doc('NEW.doc', 'strpos'))}
  ${fn('hookd_sealed_url', KEEPS_MARKER.url('NEW.url', 'strpos'))}
  ${['hook_secrets', 'eph_hook_secrets'].map((t) => trigger(t, 'secret', 'secret, previous', undefined)).join('')}
  ${['hooks', 'eph_hooks'].map((t) => trigger(t, 'doc', 'doc', HOOK_DOC_WITH_CREDENTIALS('NEW.doc', 'strpos'))).join('')}
  ${['deliveries', 'eph_deliveries'].map((t) => trigger(t, 'url', 'url', URL_WITH_CREDENTIALS('NEW.url', 'strpos'))).join('')}
`;
