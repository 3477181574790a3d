// One rule for the small caches of pure work on inputs that repeat (an SQL text, a stored secret):
// answers kept by key, and when more than `max` distinct keys have come, started over rather than
// evicted one by one (the inputs are few in practice; the cap only bounds memory if they are not).

/**
 * `compute`, remembering its answers by key (at most `max` at a time). An answer must not be
 * undefined (it marks a key not seen); a throw is not remembered.
 */
export function memoized<K, V extends NonNullable<unknown> | null>(
  compute: (key: K) => V,
  max: number,
): (key: K) => V {
  const answers = new Map<K, V>();
  return (key) => {
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = compute(key);
      if (answers.size >= max) answers.clear();
      answers.set(key, answer);
    }
    return answer;
  };
}
