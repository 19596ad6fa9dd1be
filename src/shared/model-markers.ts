/** The one tool `aca doctor` offers a model to see whether it calls tools. */
export const DOCTOR_PROBE_TOOL = 'aca_doctor_probe';

/** What aca's scripted model lists as the owner of each model: how `aca doctor` knows it. */
export const SCRIPTED_MODEL_OWNER = 'aca-scripted-model';
