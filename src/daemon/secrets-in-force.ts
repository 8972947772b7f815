/**
 * Which manifest secrets the daemon's outputs can still print, so the redactor holds those and no others
 * (issue 23: a daemon that never let go of a secret piled up every rotated-away value forever).
 *
 * Each reconcile resolves the manifests' secrets again, in a new generation of the redactor (`begin`). What the
 * daemon keeps showing (/status, /readyz: the last attempt, the last success, the rejected revision, the
 * resources and guard of the last plan, the data-source support) was made by some attempt; a value last
 * resolved in a generation older than every attempt still shown can no longer be printed, and is released.
 * Tokens of the run (`Redactor.add`) are never released.
 */
import type { Redactor } from '../util/redact.js';
import type { Attempt } from './loop.js';

export class SecretsInForce {
  private readonly generationOf = new WeakMap<Attempt, number>();
  /** What the daemon shows besides the loop's attempts, by name, with the generation it was made in. */
  private readonly held = new Map<string, number>();
  private started: number;

  constructor(private readonly redactor: Redactor) {
    this.started = redactor.generation;
  }

  /** A reconcile starts: the secrets it resolves are stamped with a new generation. */
  begin(): void {
    this.started = this.redactor.nextGeneration();
  }

  /** The attempt that just finished was made under the generation its reconcile started in. */
  record(attempt: Attempt): void {
    this.generationOf.set(attempt, this.started);
  }

  /** Something the daemon keeps showing (`what`) now comes from `attempt`. */
  hold(what: string, attempt: Attempt): void {
    this.held.set(what, this.generationOf.get(attempt) ?? this.started);
  }

  /** Release the secrets of every generation older than the oldest of what is still shown. */
  release(shown: ReadonlyArray<Attempt | undefined>): void {
    let oldest = this.started;
    for (const a of shown) {
      const g = a && this.generationOf.get(a);
      if (g !== undefined && g < oldest) oldest = g;
    }
    for (const g of this.held.values()) if (g < oldest) oldest = g;
    this.redactor.release(oldest);
  }
}
