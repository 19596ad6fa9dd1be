import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The custom search attributes of docs/contract.md, section 4; safe to import in workflow code. */
export const AgentStateKey = defineSearchAttributeKey('AgentState', SearchAttributeType.KEYWORD);
export const AgentIterationKey = defineSearchAttributeKey('AgentIteration', SearchAttributeType.INT);
export const AgentPassRateKey = defineSearchAttributeKey('AgentPassRate', SearchAttributeType.DOUBLE);
export const AgentLanguageKey = defineSearchAttributeKey('AgentLanguage', SearchAttributeType.KEYWORD);

/** The run a linked run (`aca continue`, `retry`, `fork`) came from: a run's family in lists. */
export const AgentParentRunKey = defineSearchAttributeKey('AgentParentRun', SearchAttributeType.KEYWORD);

/** Every one of them, for registering them with a server. */
export const AGENT_SEARCH_ATTRIBUTE_KEYS = [
  AgentStateKey,
  AgentIterationKey,
  AgentPassRateKey,
  AgentLanguageKey,
  AgentParentRunKey,
];
