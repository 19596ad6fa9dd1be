/**
 * Idempotent registration of the custom search attributes that make agent runs
 * queryable (`aca list`, the Web UI's filter bar). The keys themselves live in
 * src/shared so that workflow code can import them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import type { SearchAttributeType as SearchAttributeTypeName } from '@temporalio/common';
// Not re-exported from the package root in 1.24.
import {
  encodeSearchAttributeIndexedValueType,
  type SearchAttributeKey,
} from '@temporalio/common/lib/search-attributes';

import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../shared/search-attributes';

/** `--search-attribute Name=Type` values for `temporal server start-dev` (types in CLI spelling). */
export function searchAttributeCliArgs(
  keys: readonly SearchAttributeKey<SearchAttributeTypeName>[] = AGENT_SEARCH_ATTRIBUTE_KEYS,
): string[] {
  const cliType: Record<SearchAttributeTypeName, string> = {
    TEXT: 'Text',
    KEYWORD: 'Keyword',
    INT: 'Int',
    DOUBLE: 'Double',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
    KEYWORD_LIST: 'KeywordList',
  };
  return keys.flatMap((k) => ['--search-attribute', `${k.name}=${cliType[k.type]}`]);
}

export interface RegisterSearchAttributesOptions {
  keys?: readonly SearchAttributeKey<SearchAttributeTypeName>[];
  /** How long to wait for newly added attributes to show up in listSearchAttributes. */
  timeoutMs?: number;
}

/**
 * Adds whichever of the keys the namespace lacks and waits until all are listed. Safe to call on
 * every start: a second caller racing us gets "already exists", which we treat as success. An
 * attribute that exists with a different type is a real conflict and throws.
 */
export async function registerSearchAttributes(
  // A client Connection or a worker's NativeConnection: only the operator service is used.
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
  options: RegisterSearchAttributesOptions = {},
): Promise<void> {
  const keys = options.keys ?? AGENT_SEARCH_ATTRIBUTE_KEYS;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const wanted = new Map(keys.map((k) => [k.name, encodeSearchAttributeIndexedValueType(k.type)!]));

  const listCustom = async () =>
    (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};

  const existing = await listCustom();
  checkTypes(existing, wanted);
  const missing = [...wanted].filter(([name]) => existing[name] === undefined);
  if (missing.length > 0) {
    try {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing),
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  for (;;) {
    const listed = await listCustom();
    checkTypes(listed, wanted);
    if ([...wanted.keys()].every((name) => listed[name] !== undefined)) return;
    if (Date.now() > deadline) {
      const absent = [...wanted.keys()].filter((name) => listed[name] === undefined);
      throw new Error(
        `search attributes not visible on namespace ${namespace} in time: ${absent.join(', ')}`,
      );
    }
    await sleep(250);
  }
}

function checkTypes(listed: Record<string, number>, wanted: Map<string, number>): void {
  for (const [name, type] of wanted) {
    if (listed[name] !== undefined && listed[name] !== type) {
      throw new Error(
        `search attribute ${name} already exists with indexed type ${listed[name]}, want ${type}`,
      );
    }
  }
}

function isAlreadyExists(err: unknown): boolean {
  const e = err as { code?: number; message?: string; cause?: { code?: number } };
  // gRPC ALREADY_EXISTS = 6; some server versions report it as INVALID_ARGUMENT with a message.
  return e?.code === 6 || e?.cause?.code === 6 || /already exists/i.test(e?.message ?? '');
}
