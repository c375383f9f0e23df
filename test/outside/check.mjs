// Assertions for test/outside/run.sh over what the MCP Inspector CLI printed.
//
// Usage: node check.mjs <check> <file> [args...]
//
//   tools   FILE                 tools/list result holds load-skill and skill-resource
//   prompts FILE                 prompts/list result holds the prompt "skill"
//   skills  FILE PREFIX COUNTS STDERR
//                                the skills/list entries under skill://PREFIX/ have
//                                exactly the corpus's names (COUNTS: "NAME FILES" a
//                                line) less those the server left out of skills/list,
//                                each of which its stderr (in STDERR) names in
//                                exactly one warning (issue 13 item 4)
//   verify  FILE PREFIX COUNTS STDERR
//                                --verify NDJSON: every report "verified", 0
//                                mismatches; under skill://PREFIX/ one report per
//                                listed corpus skill, re-hashing exactly its files.
//
// Entries outside skill://PREFIX/ are the server's bundled skills: they must
// verify too, and are counted apart from the corpus.
//
// Each check prints one line saying what it saw, and exits 1 with a reason
// when the assertion fails. Only Node built-ins are used.
import { readFileSync } from "node:fs";

const [check, file, ...rest] = process.argv.slice(2);

function fail(msg) {
  console.error(`FAIL ${check}: ${msg}`);
  process.exit(1);
}

function readResult(path) {
  const text = readFileSync(path, "utf8");
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    fail(`output is not one JSON object (${err.message}):\n${text.slice(0, 2000)}`);
  }
  if (!doc || typeof doc !== "object" || !doc.result) {
    fail(`no "result" in output:\n${text.slice(0, 2000)}`);
  }
  return doc.result;
}

function names(list, what) {
  if (!Array.isArray(list)) fail(`${what} is not an array`);
  return list.map((x) => x?.name);
}

// corpus reads COUNTS ("NAME FILES" a line) and the server's stderr, and
// returns the corpus skills split into listed and left out: a skill is left
// out when exactly one stderr line names its SKILL.md and says "left out of
// skills/list" (issue 13 item 4: one warning, still served elsewhere).
function corpus(countsFile, stderrFile) {
  const stderr = readFileSync(stderrFile, "utf8").split("\n");
  const listed = new Map();
  const leftOut = new Map();
  for (const line of readFileSync(countsFile, "utf8").split("\n").filter(Boolean)) {
    const [name, files] = line.split(" ");
    const warnings = stderr.filter((l) => l.includes(`/${name}/SKILL.md`) && l.includes("left out of skills/list"));
    if (warnings.length > 1) fail(`${warnings.length} warnings name ${name} as left out of skills/list, want one:\n${warnings.join("\n")}`);
    (warnings.length === 1 ? leftOut : listed).set(name, Number(files));
  }
  if (listed.size + leftOut.size === 0) fail("the corpus has no skills to compare with");
  return { listed, leftOut };
}

switch (check) {
  case "tools": {
    const got = names(readResult(file).tools, "result.tools");
    for (const want of ["load-skill", "skill-resource"]) {
      if (!got.includes(want)) fail(`tool ${want} missing; got [${got.join(", ")}]`);
    }
    console.log(`tools/list: ${got.length} tools [${got.join(", ")}]`);
    break;
  }
  case "prompts": {
    const got = names(readResult(file).prompts, "result.prompts");
    if (!got.includes("skill")) fail(`prompt "skill" missing; got [${got.join(", ")}]`);
    console.log(`prompts/list: ${got.length} prompts, including "skill"`);
    break;
  }
  case "skills": {
    const all = readResult(file).skills;
    if (!Array.isArray(all)) fail("result.skills is not an array");
    const bad = all.filter(
      (s) => typeof s?.uri !== "string" || !s.uri.startsWith("skill://") || !s.uri.endsWith("/SKILL.md"),
    );
    if (bad.length) fail(`entries with a bad uri: ${bad.map((s) => JSON.stringify(s?.uri)).join(", ")}`);
    const base = `skill://${rest[0]}/`;
    const skills = all.filter((s) => s.uri.startsWith(base));
    const others = all.filter((s) => !s.uri.startsWith(base)).map((s) => s.uri);
    const got = skills.map((s) => s?.frontmatter?.name).sort();
    const { listed, leftOut } = corpus(rest[1], rest[2]);
    const want = [...listed.keys()].sort();
    const missing = want.filter((n) => !got.includes(n));
    const extra = got.filter((n) => !want.includes(n));
    if (got.length !== want.length || missing.length || extra.length) {
      fail(
        `skills/list has ${got.length} skills under ${base}, the corpus ${want.length} with no left-out warning; ` +
          `missing [${missing.join(", ")}], unexpected [${extra.join(", ")}]`,
      );
    }
    console.log(
      `skills/list: ${all.length} skills: ${got.length} under ${base} with the corpus's names` +
        `, ${leftOut.size} left out with one warning each [${[...leftOut.keys()].join(", ")}]` +
        `, ${others.length} other [${others.join(", ")}]`,
    );
    break;
  }
  case "verify": {
    const base = `skill://${rest[0]}/`;
    const { listed } = corpus(rest[1], rest[2]);
    const wantSkills = listed.size;
    const wantFiles = [...listed.values()].reduce((a, b) => a + b, 0);
    const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
    const reports = lines.map((l, i) => {
      try {
        return JSON.parse(l);
      } catch (err) {
        fail(`line ${i + 1} is not JSON (${err.message}): ${l.slice(0, 500)}`);
      }
    });
    const problems = [];
    const reasons = new Map(); // file failure reason -> count
    let files = 0;
    let verifiedFiles = 0;
    let mismatches = 0;
    let corpusSkills = 0;
    let corpusFiles = 0;
    for (const r of reports) {
      const fs = Array.isArray(r.files) ? r.files : [];
      files += fs.length;
      if (typeof r.uri === "string" && r.uri.startsWith(base)) {
        corpusSkills += 1;
        corpusFiles += fs.length;
      }
      verifiedFiles += fs.filter((f) => f.status === "verified").length;
      mismatches += fs.filter((f) => f.status === "mismatch").length;
      const issues = [...(r.conformance ?? []), ...(r.frontmatter ?? [])].filter((i) => i.severity === "error");
      if (r.outcome !== "verified" || r.ok !== true) {
        const badFiles = fs.filter((f) => f.status !== "verified");
        for (const f of badFiles) {
          const key = `${f.status}: ${f.reason ?? `expected ${f.expectedDigest} (${f.expectedSize} B), got ${f.actualDigest} (${f.actualSize} B)`}`;
          reasons.set(key, (reasons.get(key) ?? 0) + 1);
        }
        const parts = issues.map((i) => `${i.code}: ${i.message}`);
        if (r.incomplete) parts.push(`incomplete: ${r.incomplete}`);
        if (badFiles.length) parts.push(`${badFiles.length} of ${fs.length} files not verified, first ${badFiles[0].uri}`);
        problems.push(`${r.uri}: ${r.outcome}; ${parts.join("; ") || "no reason given"}`);
      }
    }
    if (problems.length) {
      const why = [...reasons].map(([reason, n]) => `${n} file(s): ${reason}`);
      fail(
        `${problems.length} of ${reports.length} skills not verified:\n  ${problems.join("\n  ")}` +
          (why.length ? `\n  file failures by reason:\n    ${why.join("\n    ")}` : ""),
      );
    }
    if (mismatches !== 0) fail(`${mismatches} digest/size mismatches`);
    if (verifiedFiles !== files) fail(`${files - verifiedFiles} of ${files} files not verified`);
    if (corpusSkills !== wantSkills) fail(`verified ${corpusSkills} skills under ${base}, want ${wantSkills}`);
    if (corpusFiles !== wantFiles) {
      fail(`re-hashed ${corpusFiles} files under ${base}, but the corpus skills hold ${wantFiles} files`);
    }
    console.log(
      `verify: ${reports.length} skills checked, all verified` +
        `; ${files} files re-hashed, all match, 0 mismatches` +
        ` (corpus: ${corpusSkills} skills, ${corpusFiles} files; other: ` +
        `${reports.length - corpusSkills} skills, ${files - corpusFiles} files)`,
    );
    break;
  }
  default:
    fail(`unknown check; use tools, prompts, skills or verify`);
}
