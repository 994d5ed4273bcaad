/**
 * Every default of the harness in one place (the OneDayAgent paper, Table 6).
 * @module
 */
export const DEFAULTS = {
  /** ReAct iterations of one executor loop (a subtask attempt, synthesis): Table 6's 200. */
  maxIterations: 200,
  /** Cap on the ReAct iterations of a whole run: none, the run is bounded by its loops and its timeout. */
  maxRunIterations: undefined,
  /** Wall-clock limit of one run. */
  timeoutMs: 7_200_000,
  /** Context window assumed when a backend reports none. */
  contextWindow: 128_000,
  maxSubtasks: 6,
  /**
   * Subtasks that may run at the same time, once the ones they depend on have finished. 1: the paper's order, each
   * subtask seeing every earlier one's result. Running subtasks side by side is opt-in, because it trusts the planner's
   * `dependsOn`: a subtask wrongly marked independent never sees the result it needed.
   */
  maxParallelSubtasks: 1,
  subtaskAttempts: 3,
  repairAttempts: 3,
  repairIterations: 50,
  compressAt: 0.9,
  emergencyAt: 0.95,
  keepRecentRounds: 3,
  /**
   * With observation aging on a backend that caches prompts: old rounds whose observations wait before they age, all
   * at once (each aging rewrites the dialogue from the first aged message on). See docs/memory.md, "Prompt caching".
   */
  agingBatchRounds: 8,
  maxSummaryChars: 8_000,
  visitSummaryThresholdChars: 20_000,
  toolMessageChars: 8_000,
  filePreviewChars: 10_000,
  fileParserTokens: 20_000,
  /** A model repeating the same invalid call this many times in a row is stopped. */
  maxRepeatedInvalidCalls: 3,
  /**
   * Longest model reply read as JSON (a plan, a verdict, an audit, a manager decision), in characters. A longer reply
   * is refused unread, as a malformed one (re-asked once, then the role's fallback). Real replies of these shapes are
   * far shorter (8 192 output tokens are some 30 000 characters); the bound keeps a hostile or runaway reply from
   * holding up the process.
   */
  maxJsonReplyChars: 1_000_000,
  /** Per-call timeout of a tool. */
  toolTimeoutMs: 120_000,
  /**
   * How long one operation of a run's snapshot store (a save, a load) may take before it counts as failed: a healthy
   * store takes milliseconds, a busy disk's fsync can take seconds, and one that takes longer is treated as gone.
   */
  storeTimeoutMs: 30_000,
  /** Per-request timeout of an HTTP backend. */
  requestTimeoutMs: 600_000,
  /** Retries of a retryable backend error. */
  maxRetries: 4,
  /**
   * Output tokens reserved for the answer of every request, and sent as its `maxOutputTokens`; a request's input
   * may use the window less this. Never more than a quarter of a backend's window (see `reservedOutputTokens`).
   */
  maxOutputTokens: 8_192,
  /** Sampling temperature of every request (OneDayAgent §3.1.2). */
  temperature: 1.0,
  /** Nucleus sampling top-p of every request (OneDayAgent §3.1.2). */
  topP: 0.95,
  /**
   * Images one verify request may carry (delivered image files, images embedded in delivered PPTX and DOCX files, the
   * first page of delivered PDFs) and the largest each may be. A longer side or more pixels is downscaled; 1 568 px and
   * 1.15 megapixels are what Anthropic's vision API takes without scaling down. 3 750 000 bytes keeps an image's base64
   * form under 5 MB, Anthropic's per-image limit (the other common providers allow more).
   */
  verifyImages: { maxImages: 8, maxLongSide: 1_568, maxPixels: 1_150_000, maxBytes: 3_750_000 },
} as const;
