// Regenerates testdata/jonggrang-c2, the fixtures of formats.md C.2 (what the real jonggrang writers do), with
// the convention's own serializer, so quoting, key order and indentation are exactly what js-yaml 4 writes.
//   npm install js-yaml@4 (anywhere), then: NODE_PATH=<that>/node_modules node testdata/jonggrang-c2/_gen/gen.js
// Values are reconstructed. Lock files are written by the tests (they need a live pid and a fresh time), in
// the convention's style: JSON.stringify(x, null, 2), no trailing newline.
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

const project = path.join(__dirname, '..');
const features = path.join(project, '.jonggrang', '.output', 'features');

const NAMES = {
  1: 'setup', 2: 'triage', 3: 'codebase-discovery', 4: 'skill-discovery', 5: 'complexity',
  6: 'brainstorming', 7: 'architecting', 8: 'implementation', 9: 'simplification',
  10: 'design-verification', 11: 'domain-compliance', 12: 'code-quality', 13: 'test-planning',
  14: 'testing', 15: 'coverage', 16: 'test-quality', 17: 'completion',
};

function phase(num, status, start, end, extra = {}) {
  return Object.assign({
    name: NAMES[num], status, started_at: start, completed_at: end, agent_id: null, output: null, output_files: [],
  }, extra);
}

function write(fid, manifest, name = 'MANIFEST.yaml') {
  const dir = path.join(features, fid);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), yaml.dump(manifest, { lineWidth: -1 }));
}

// A compact run that the web server reopened after tasks were added (status in_progress, every completed
// phase >= 8 back to pending). Nothing runs it: it waits to be resumed. Its times end in a zero
// (…15.120Z, …00.100Z), which a re-formatting reader would shorten.
{
  const fid = 'reopened-cart-mlopc001';
  const active = [1, 2, 3, 4, 8, 9, 11, 12, 13, 14, 15, 16, 17];
  const phases = {};
  const t = (m, ms) => new Date(Date.parse('2026-02-16T04:00:00.000Z') + m * 60000 + ms).toISOString();
  for (const n of active) {
    if (n <= 4) phases[String(n)] = phase(n, 'completed', t(n, 120), t(n, 1100));
    else phases[String(n)] = phase(n, 'pending', null, null);
  }
  write(fid, {
    feature_id: fid, description: 'Cart: saved items', work_type: 'SMALL', pipeline_mode: 'compact',
    created_at: t(0, 100), updated_at: '2026-02-16T04:50:15.120Z', status: 'in_progress', current_phase: 8,
    active_phases: active, phases, agents: {},
    validation: { review_passed: false, tests_passed: false, coverage_met: false }, locks: [], context_usage: 0.2,
  });
}

// A MEDIUM run in phase 10 with a reviewer agent registered: the tests give it a live lock.
{
  const fid = 'design-review-mlopc002';
  const active = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
  const phases = {};
  const t = (m) => new Date(Date.parse('2026-02-16T03:00:00.000Z') + m * 60000).toISOString();
  for (const n of active) {
    if (n <= 9) phases[String(n)] = phase(n, 'completed', t(n * 2), t(n * 2 + 1));
    else if (n === 10) phases['10'] = phase(10, 'running', t(20), null);
    else phases[String(n)] = phase(n, 'pending', null, null);
  }
  write(fid, {
    feature_id: fid, description: 'Design review of the settings page', work_type: 'MEDIUM', pipeline_mode: 'full',
    created_at: t(0), updated_at: t(20), status: 'running', current_phase: 10, active_phases: active, phases,
    agents: {
      'reviewer-design-001': {
        role: 'reviewer', status: 'running', started_at: t(20), output_path: null, locked_files: ['src/settings.ts'],
      },
    },
    validation: { review_passed: false, tests_passed: false, coverage_met: false }, locks: [], context_usage: 0.5,
  });
}

// A plan waiting for approval in the web UI: plan.md, no manifest.
{
  const dir = path.join(features, 'planned-search-mlopc003');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'plan.md'), '# Plan: full-text search\n\n- task-001: index documents\n- task-002: query API\n');
}

// A manifest under a name no real reader opens.
{
  write('yml-only-mlopc004', {
    feature_id: 'yml-only-mlopc004', description: 'Written as MANIFEST.yml', work_type: 'SMALL', pipeline_mode: 'full',
    created_at: '2026-02-16T01:00:00.000Z', updated_at: '2026-02-16T01:00:00.000Z', status: 'running',
    current_phase: 1, active_phases: [1], phases: { 1: phase(1, 'running', '2026-02-16T01:00:00.000Z', null) },
    agents: {}, validation: { review_passed: false, tests_passed: false, coverage_met: false }, locks: [],
    context_usage: null,
  }, 'MANIFEST.yml');
}

// Ephemeral gates. The compaction state is older than the 5 minutes the gate trusts (the tests refresh
// updated_at where they need it fresh). The feedback loop recorded a result for a domain that is not in
// modified_domains: the exit gate does not count it.
{
  const eph = path.join(project, '.jonggrang', '.ephemeral');
  fs.mkdirSync(eph, { recursive: true });
  const json = (file, v) => fs.writeFileSync(path.join(eph, file), JSON.stringify(v, null, 2));
  json('compaction-state.json', {
    status: 'block', ratio: 0.88, tokens: 176000,
    message: 'BLOCK: Context at 88%. Compact before any heavy phase.', updated_at: '2026-02-16T04:40:00.000Z',
  });
  json('feedback-loop-state.json', {
    active: true, iteration: 3, modified_domains: ['backend'],
    domain_phases: {
      backend: {
        review: { status: 'PASS', agent: 'reviewer', timestamp: '2026-02-16T04:41:00.000Z' },
        testing: { status: 'PASS', agent: 'tester', timestamp: '2026-02-16T04:42:00.000Z' },
      },
      frontend: {
        review: { status: 'FAIL', agent: 'reviewer', timestamp: '2026-02-16T04:40:30.000Z' },
        testing: { status: 'PENDING', agent: null, timestamp: null },
      },
    },
    dirty_bit: true, last_outputs: [], stuck_count: 1,
    created_at: '2026-02-16T04:30:00.000Z', updated_at: '2026-02-16T04:42:00.000Z',
  });
  fs.mkdirSync(path.join(project, '.jonggrang', 'locks'), { recursive: true });
  fs.writeFileSync(path.join(project, '.jonggrang', 'locks', '.keep'), '');
}
