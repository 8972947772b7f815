/** Route table: `:param` patterns, literal segments win over parameters, 405 for a known path. */
import type { Route } from './http.js';

interface Compiled {
  route: Route;
  segments: string[];
  literals: number;
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allowed: string[] }
  | { kind: 'none' };

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(v);
      } catch {
        return undefined;
      }
    } else if (p !== v) return undefined;
  }
  return params;
}

export class Router {
  private readonly compiled: Compiled[] = [];

  constructor(routes: Route[] = []) {
    for (const r of routes) this.add(r);
  }

  add(route: Route): void {
    const segments = split(route.pattern);
    this.compiled.push({ route, segments, literals: segments.filter((s) => !s.startsWith(':')).length });
    // More literal segments first, so `/integrations/scripts/create` beats `/integrations/:id/...`.
    this.compiled.sort((a, b) => b.literals - a.literals);
  }

  match(method: string, path: string): Match {
    const parts = split(path);
    const allowed = new Set<string>();
    for (const c of this.compiled) {
      const params = matchSegments(c.segments, parts);
      if (!params) continue;
      if (c.route.method === method) return { kind: 'found', route: c.route, params };
      allowed.add(c.route.method);
    }
    return allowed.size ? { kind: 'method', allowed: [...allowed] } : { kind: 'none' };
  }
}
