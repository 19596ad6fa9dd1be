import * as fs from 'node:fs';
import { z } from 'zod';
import { UserInputError } from '../shared/errors';

const predictionSchema = z.looseObject({
  instance_id: z.string().min(1),
  model_patch: z.string().nullable(),
  model_name_or_path: z.string().optional(),
});

export type Prediction = { model_name_or_path: string; model_patch: string };

/**
 * A predictions file as SWE-bench reads them: one JSON object a line, or one JSON list of them,
 * each with `instance_id`, `model_patch` (null: empty) and `model_name_or_path`.
 */
export function readPredictions(file: string): Map<string, Prediction> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserInputError(`cannot read the predictions file ${file}: ${(err as Error).message}`);
  }
  let values: { value: unknown; where: string }[];
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(trimmed);
    } catch {
      throw new UserInputError(`${file} is not JSON`);
    }
    if (!Array.isArray(list)) throw new UserInputError(`${file} is not a list of predictions`);
    values = list.map((value, i) => ({ value, where: `${file} item ${i + 1}` }));
  } else {
    values = [];
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        values.push({ value: JSON.parse(line), where: `${file} line ${i + 1}` });
      } catch {
        throw new UserInputError(`${file} line ${i + 1} is not JSON`);
      }
    });
  }
  const predictions = new Map<string, Prediction>();
  for (const { value, where } of values) {
    const parsed = predictionSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UserInputError(
        `${where} is not a prediction: ${issue.path.join('.') || 'it'} ${issue.message}`,
      );
    }
    predictions.set(parsed.data.instance_id, {
      model_name_or_path: parsed.data.model_name_or_path ?? 'predictions',
      model_patch: parsed.data.model_patch ?? '',
    });
  }
  return predictions;
}
