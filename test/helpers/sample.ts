/**
 * What the repository's `sample-skills` tree publishes, written out once (by hand, not derived from `src/`) so that
 * the unit, integration and end-to-end tests all hold the server to the same expectation.
 */

/** The `SKILL.md` URIs of the six sample skills, in the order the server lists them (sorted by URI). */
export const SAMPLE_SKILL_URIS: readonly string[] = [
  'skill://acme/billing/refunds/SKILL.md',
  'skill://acme/support/refunds/SKILL.md',
  'skill://data-pipeline/SKILL.md',
  'skill://data-pipeline/csv-cleaning/SKILL.md',
  'skill://pdf-summaries/SKILL.md',
  'skill://report-writer/SKILL.md',
];

/**
 * The six catalog lines that `read_skill`'s description lists for the sample skills, in URI order (`- name:
 * description`; the two `refunds` skills with their `SKILL.md` URI); the heading above them is left to each test.
 */
export const SAMPLE_CATALOG_LINES: readonly string[] = [
  '- refunds (skill://acme/billing/refunds/SKILL.md): Process refunds in the Acme billing system: check eligibility against the refund policy, choose between full, partial, and prorated refunds, issue credit notes, and record the accounting entries. Use when a billing or finance task involves reversing a charge, issuing a credit, or correcting an invoice.',
  '- refunds (skill://acme/support/refunds/SKILL.md): Handle customer refund requests in Acme support conversations - acknowledge the request, gather the details billing needs, set honest expectations on timing, and write the reply. Use when a customer asks for their money back, disputes a charge, or asks where their refund is.',
  '- data-pipeline: Plan, build, and check small batch data pipelines that load tabular files (CSV, JSON Lines), validate them, transform them, and write clean outputs. Use when the user wants to ingest or reshape a dataset, check a file against a schema, or set up a repeatable extract-transform-load step.',
  '- csv-cleaning: Clean messy CSV files before loading them - fix text encodings, detect delimiters, normalise headers, trim whitespace, and drop blank or repeated header rows. Use when a CSV fails to parse, shows garbled characters, or has inconsistent columns.',
  '- pdf-summaries: Summarise PDF documents such as papers, contracts, manuals and slide decks into short, faithful summaries with page references. Use when the user shares a PDF (or text extracted from one) and asks for a summary, the key points, a TL;DR, or "what does this say about X".',
  '- report-writer: Write structured business and technical reports (status reports, post-incident reviews, research write-ups, quarterly reviews) in a consistent house style. Use when the user asks for a report, a write-up, or a formal summary of work, results, or an investigation, and wants it ready to share.',
];

/** The prompt names of the sample skills, in `skills/list` order (the two `refunds` get their skill paths). */
export const SAMPLE_PROMPT_NAMES: readonly string[] = [
  'acme-billing-refunds',
  'acme-support-refunds',
  'data-pipeline',
  'csv-cleaning',
  'pdf-summaries',
  'report-writer',
];
