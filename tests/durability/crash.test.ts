import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrashCampaign, type CampaignFigures } from './fixtures/crash-driver.js';
import { FORGERY_KINDS } from './fixtures/forgeries.js';
import { STOP_POINTS } from './fixtures/stop-points.js';

/**
 * 30 SIGKILLs of child processes running the scenario (3 subtasks, synthesis, a failed verification, a repair), at
 * seeded points of the run: at its start and right after its first snapshot (before the first model call), inside
 * model calls, inside tool calls, between stages and during the repair. Each child stops itself at its point and is
 * killed there (no timers: the same kills on a loaded machine). Every killed run is resumed in a fresh child until it
 * finishes; before some of those resumes an agent forges the snapshot, one forgery of each kind, and the resume must
 * refuse it. Once with `durability: 'sync'`, once with the default `'async'`.
 */
describe.each(['sync', 'async'] as const)('crash and resume in child processes, durability %s', (durability) => {
  let root: string;
  let figures: CampaignFigures;

  // The limit only guards against a hang: the kills are the same on a machine of any speed, and a loaded one (two
  // cores under a load average of 20) takes several minutes.
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'harness-crash-'));
    figures = await runCrashCampaign({
      kills: 30,
      seed: 20261201,
      latencyMs: 12,
      root,
      durability,
      forgeries: FORGERY_KINDS.length,
    });
  }, 900_000);

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('finishes every killed run with the deliverable of an uninterrupted run, losing no run and no artifact', () => {
    expect(figures.kills).toHaveLength(30);
    expect(figures.runs).toBeGreaterThan(0);
    expect(figures.lostRuns).toBe(0);
    expect(figures.differentDeliverables).toBe(0);
    expect(figures.lostArtifacts).toBe(0);
  });

  it('kills before the first model call, inside model calls and tool calls, between stages and during the repair', () => {
    const categories = new Set(figures.kills.map((kill) => kill.category));
    expect([...categories].sort()).toEqual([...STOP_POINTS].sort());
  });

  it('refuses every forged snapshot, as tampered or corrupt, and the run goes on from the genuine one', () => {
    expect(new Set(figures.forgeries.map((f) => f.kind)), JSON.stringify(figures.forgeries)).toEqual(
      new Set(FORGERY_KINDS),
    );
    for (const forgery of figures.forgeries) {
      expect(['snapshot-tampered', 'snapshot-corrupt'], forgery.kind).toContain(forgery.refusedWith);
    }
  });

  it('never starts a write before a stored snapshot records it', () => {
    for (const kill of figures.kills) expect(kill.unrecordedWrites, JSON.stringify(kill)).toBe(0);
  });

  // With 'async', a resume re-does what was made since the last stored snapshot, which a slow store lets grow.
  if (durability === 'sync') {
    it('re-does at most one model call and one tool call per kill', () => {
      for (const kill of figures.kills) {
        expect(kill.redoneModelCalls, JSON.stringify(kill)).toBeLessThanOrEqual(1);
        expect(kill.redoneToolCalls, JSON.stringify(kill)).toBeLessThanOrEqual(1);
      }
    });
  }

  it('reports a write interrupted mid-call and never runs it again itself', () => {
    for (const kill of figures.kills) expect(kill.reinvokedInterrupted).toBe(0);
    expect(figures.kills.some((kill) => kill.interruptedCalls > 0)).toBe(true);
  });

  it('numbers the events of a resumed run on from its snapshot, each marked resumed', () => {
    expect(figures.numberingHeld).toBe(true);
    expect(figures.maxSnapshotBytes).toBeGreaterThan(0);
  });
});
