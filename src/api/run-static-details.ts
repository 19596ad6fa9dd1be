import type { RunInput, RunLink } from '../shared/run-types';

/**
 * The Web UI's path of a run's page. Relative to the UI's root, not to an address of aca's
 * configuration: the same history is read through whatever address the UI is reached by.
 */
export function webUiRunPath(namespace: string, workflowId: string): string {
  return `/namespaces/${pathPart(namespace)}/workflows/${pathPart(workflowId)}`;
}

/** A path segment that also keeps a markdown link whole: parentheses would end its target. */
function pathPart(text: string): string {
  return encodeURIComponent(text).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Markdown link text that shows the id as it is, whatever brackets it holds. */
function linkText(text: string): string {
  return text.replace(/[\\[\]*_`]/g, (c) => `\\${c}`);
}

function linkLine(link: RunLink, namespace: string): string {
  const parent = `[${linkText(link.parentRun)}](${webUiRunPath(namespace, link.parentRun)})`;
  switch (link.kind) {
    case 'fork':
      return `**Forked from:** ${parent} at attempt ${link.attemptsBefore + 1}`;
    case 'retry':
      return `**Retries:** ${parent} after its attempt ${link.attemptsBefore}`;
    case 'continue':
      return `**Continues:** ${parent}`;
  }
}

/** What the run's page shows under Details for its whole life: the task, how it runs, its parent. */
export function runStaticDetails(input: RunInput, namespace: string): string {
  // The parent first: the Details box is short, and where a run comes from is read before its task.
  return [
    ...(input.link ? [linkLine(input.link, namespace)] : []),
    `**Task:** ${input.task}`,
    `**Language:** ${input.language} · **Model:** ${input.model}${input.workspace ? ` · **Workspace:** ${input.workspace}` : ''}`,
  ].join('\n\n');
}
