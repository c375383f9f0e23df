// Assertions for test/outside/run.sh over what the MCP Inspector CLI printed.
//
// Usage: node check.mjs <check> <file> [args...]
//
//   tools   FILE                 tools/list result holds load-skill and skill-resource
//   prompts FILE                 prompts/list result holds the prompt "skill"
//   skills  FILE NAMESFILE       skills/list names equal the corpus names (one a line)
//   verify  FILE SKILLS FILES    --verify NDJSON: SKILLS reports, all "verified",
//                                FILES files re-hashed, 0 mismatches
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
    const skills = readResult(file).skills;
    if (!Array.isArray(skills)) fail("result.skills is not an array");
    const got = skills.map((s) => s?.frontmatter?.name).sort();
    const want = readFileSync(rest[0], "utf8").split("\n").filter(Boolean).sort();
    if (want.length === 0) fail("the corpus has no skills to compare with");
    const missing = want.filter((n) => !got.includes(n));
    const extra = got.filter((n) => !want.includes(n));
    if (got.length !== want.length || missing.length || extra.length) {
      fail(
        `skills/list has ${got.length} skills, corpus has ${want.length}; ` +
          `missing [${missing.join(", ")}], unexpected [${extra.join(", ")}]`,
      );
    }
    const bad = skills.filter(
      (s) => typeof s.uri !== "string" || !s.uri.startsWith("skill://") || !s.uri.endsWith("/SKILL.md"),
    );
    if (bad.length) fail(`entries with a bad uri: ${bad.map((s) => s.uri).join(", ")}`);
    console.log(`skills/list: ${got.length} skills, same names as the corpus`);
    break;
  }
  case "verify": {
    const wantSkills = Number(rest[0]);
    const wantFiles = Number(rest[1]);
    const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
    const reports = lines.map((l, i) => {
      try {
        return JSON.parse(l);
      } catch (err) {
        fail(`line ${i + 1} is not JSON (${err.message}): ${l.slice(0, 500)}`);
      }
    });
    const problems = [];
    let files = 0;
    let verifiedFiles = 0;
    let mismatches = 0;
    for (const r of reports) {
      const fs = Array.isArray(r.files) ? r.files : [];
      files += fs.length;
      verifiedFiles += fs.filter((f) => f.status === "verified").length;
      mismatches += fs.filter((f) => f.status === "mismatch").length;
      if (r.outcome !== "verified" || r.ok !== true) {
        problems.push(`${r.uri}: outcome ${r.outcome}\n    ${JSON.stringify({ conformance: r.conformance, frontmatter: r.frontmatter, incomplete: r.incomplete, files: fs.filter((f) => f.status !== "verified") })}`);
      }
    }
    if (problems.length) fail(`${problems.length} of ${reports.length} skills not verified:\n  ${problems.join("\n  ")}`);
    if (mismatches !== 0) fail(`${mismatches} digest/size mismatches`);
    if (reports.length !== wantSkills) fail(`verified ${reports.length} skills, want ${wantSkills}`);
    if (verifiedFiles !== files) fail(`${files - verifiedFiles} of ${files} files not verified`);
    if (!Number.isNaN(wantFiles) && files !== wantFiles) {
      fail(`re-hashed ${files} files, but the corpus skills hold ${wantFiles} files`);
    }
    console.log(`verify: ${reports.length} skills verified, ${files} files re-hashed, 0 mismatches`);
    break;
  }
  default:
    fail(`unknown check; use tools, prompts, skills or verify`);
}
