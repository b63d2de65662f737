// The lines the READMEs show an app developer are those of readme.ts,
// which `npm run typecheck` compiles against the built package.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const read = (path) => readFileSync(new URL(path, import.meta.url), "utf8");
const compiled = read("./readme.ts").split("\n").map((l) => l.trim());

for (const [readme, section] of [["../../../README.md", "## App-side SDK"], ["../README.md", "## Use"]]) {
  test(`${readme}: the ${section} lines are compiled`, () => {
    const text = read(readme);
    const at = text.indexOf(section + "\n");
    assert.ok(at >= 0, `no section ${section}`);
    const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
    assert.ok(block, `no js block in ${section}`);
    const lines = block[1].split("\n").map((l) => l.trim()).filter((l) => l !== "");
    assert.ok(lines.length >= 6);
    for (const line of lines) {
      assert.ok(compiled.includes(line), `${readme}: ${JSON.stringify(line)} is not in test/readme.ts`);
    }
  });
}
