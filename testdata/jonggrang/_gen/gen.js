// Regenerates the fixture manifests of testdata/jonggrang with the convention's own serializer, so their
// style (quoted keys and timestamps, key order, indentation) is exactly what js-yaml 4 writes.
//   npm install js-yaml@4 (anywhere), then: NODE_PATH=<that>/node_modules node testdata/jonggrang/_gen/gen.js
// Values are reconstructed (formats.md "Fixture A"); lock timestamps and pids are rewritten by the tests.
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

const project = path.join(__dirname, '..');
const features = path.join(project, '.jonggrang', '.output', 'features');

const NAMES = {
  1: 'setup', 2: 'triage', 3: 'codebase-discovery', 4: 'skill-discovery', 5: 'complexity',
  6: 'brainstorming', 6.5: 'design-system', 7: 'architecting', 8: 'implementation', 9: 'simplification',
  10: 'design-verification', 11: 'domain-compliance', 12: 'code-quality', 13: 'test-planning',
  14: 'testing', 15: 'coverage', 16: 'test-quality', 17: 'completion',
};

// iso returns base + minutes as JavaScript's toISOString does.
const iso = (base, minutes) => new Date(Date.parse(base) + minutes * 60000).toISOString();

function phase(num, status, start, end, extra = {}) {
  return Object.assign({
    name: NAMES[num],
    status,
    started_at: start,
    completed_at: end,
    agent_id: null,
    output: null,
    output_files: [],
  }, extra);
}

function write(fid, manifest) {
  const dir = path.join(features, fid);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'MANIFEST.yaml'), yaml.dump(manifest, { lineWidth: -1 }));
}

// 1. A MEDIUM run with a UI, in phase 10. '6.5' is inserted last, so js-yaml writes it after '17'.
{
  const fid = 'add-login-form-mlop4860';
  const base = '2026-02-16T04:50:15.123Z';
  const active = [1, 2, 3, 4, 5, 6, 6.5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
  const phases = {};
  for (const n of active.filter((n) => n !== 6.5)) {
    if (n <= 9) phases[String(n)] = phase(n, 'completed', iso(base, n * 3), iso(base, n * 3 + 2));
    else if (n === 10) phases[String(n)] = phase(n, 'running', '2026-02-16T05:31:02.400Z', null);
    else phases[String(n)] = phase(n, 'pending', null, null);
  }
  phases['1'].output = { manifest_path: `/home/u/app/.jonggrang/.output/features/${fid}/MANIFEST.yaml` };
  phases['2'].output = { work_type: 'MEDIUM' };
  phases['8'].output_files = [
    { path: 'src/auth.ts', type: 'code', size: 2311, created_at: '2026-02-16T05:16:10.000Z', agent_id: 'developer-auth-001', task_id: 'task-001' },
    { path: '.jonggrang/.output/features/add-login-form-mlop4860/08-developer-task-001.json', type: 'output', size: null, created_at: '2026-02-16T05:16:11.000Z' },
  ];
  phases['6.5'] = phase(6.5, 'completed', iso(base, 20.25), iso(base, 20.75));
  write(fid, {
    feature_id: fid,
    description: 'Add login form with validation',
    work_type: 'MEDIUM',
    pipeline_mode: 'full',
    has_ui: true,
    design_artifact: './DESIGN.md',
    created_at: base,
    updated_at: '2026-02-16T05:31:02.417Z',
    status: 'running',
    current_phase: 10,
    active_phases: active,
    phases,
    agents: {
      'developer-auth-001': {
        role: 'developer', status: 'running', started_at: '2026-02-16T05:14:20.000Z', output_path: null,
        locked_files: ['src/auth.ts'],
      },
    },
    validation: { review_passed: false, tests_passed: false, coverage_met: false },
    locks: [],
    context_usage: 0.42,
  });
}

// 3. A BUGFIX run, finished.
{
  const fid = 'fix-typo-mlop9zz1';
  const base = '2026-02-15T09:00:00.000Z';
  const active = [1, 2, 3, 4, 8, 11, 12, 14, 15, 16, 17];
  const phases = {};
  active.forEach((n, i) => { phases[String(n)] = phase(n, 'completed', iso(base, i * 2), iso(base, i * 2 + 1)); });
  phases['8'].output_files = [{ path: 'README.md', type: 'code', size: 5120, created_at: iso(base, 9) }];
  write(fid, {
    feature_id: fid, description: 'Fix typo in README', work_type: 'BUGFIX', pipeline_mode: 'full',
    created_at: base, updated_at: iso(base, 22), status: 'completed', current_phase: null, active_phases: active,
    phases, agents: {}, validation: { review_passed: true, tests_passed: true, coverage_met: true }, locks: [],
    context_usage: 0.18,
  });
}

// 4. A LARGE run paused for a person: phase 6 failed with "Awaiting human input".
{
  const fid = 'new-billing-mlopa001';
  const base = '2026-02-16T02:00:00.000Z';
  const active = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
  const phases = {};
  for (const n of active) {
    if (n <= 5) phases[String(n)] = phase(n, 'completed', iso(base, n * 3), iso(base, n * 3 + 2));
    else if (n === 6) {
      phases['6'] = phase(6, 'failed', iso(base, 18), iso(base, 19), { output: { error: 'Awaiting human input (brainstorming)' } });
    } else phases[String(n)] = phase(n, 'pending', null, null);
  }
  write(fid, {
    feature_id: fid, description: 'New billing: invoices, tax, Stripe webhooks', work_type: 'LARGE',
    pipeline_mode: 'full', created_at: base, updated_at: iso(base, 19), status: 'failed', current_phase: 6,
    active_phases: active, phases, agents: {},
    validation: { review_passed: false, tests_passed: false, coverage_met: false }, locks: [], context_usage: null,
  });
}

// 5. A compact-mode run: finalized after implementation, the later phases skipped.
{
  const fid = 'compact-header-mlopb002';
  const base = '2026-02-16T01:00:00.000Z';
  const active = [1, 2, 3, 4, 8, 9, 11, 12, 13, 14, 15, 16, 17];
  const phases = {};
  for (const n of active) {
    if (n <= 8) phases[String(n)] = phase(n, 'completed', iso(base, n), iso(base, n + 0.5));
    else phases[String(n)] = phase(n, 'skipped', null, iso(base, 9), { skip_reason: 'compact-pipeline' });
  }
  write(fid, {
    feature_id: fid, description: 'Compact header on mobile', work_type: 'SMALL', pipeline_mode: 'compact',
    has_ui: false, created_at: base, updated_at: iso(base, 9), status: 'completed', current_phase: null,
    active_phases: active, phases, agents: {},
    validation: { review_passed: false, tests_passed: false, coverage_met: false }, locks: [], context_usage: 0.3,
  });
}

// 11. A manifest cut mid-line, as a reader sees it during a non-atomic rewrite.
{
  const whole = fs.readFileSync(path.join(features, 'add-login-form-mlop4860', 'MANIFEST.yaml'), 'utf8');
  const dir = path.join(features, 'torn-write-mlopbad1');
  fs.mkdirSync(dir, { recursive: true });
  const cut = whole.indexOf("  '9':");
  fs.writeFileSync(path.join(dir, 'MANIFEST.yaml'), whole.slice(0, cut + 4).replace('add-login-form-mlop4860', 'torn-write-mlopbad1'));
}

// 2. Phase outputs, tasks and progress beside the first manifest, and the project's ephemeral state and
// locks. These are JSON.stringify(x, null, 2) files, as the convention writes them.
{
  const fid = 'add-login-form-mlop4860';
  const dir = path.join(features, fid);
  const json = (file, v, newline = true) => fs.writeFileSync(file, JSON.stringify(v, null, 2) + (newline ? '\n' : ''));
  const header = (phaseNum, role, extra) => Object.assign({
    'jonggrang-output': true, feature_id: fid, phase: phaseNum, role,
  }, extra);
  json(path.join(dir, '07-lead-architecture-plan.json'), header(7, 'lead', {
    agent_id: 'lead-001', timestamp: '2026-02-16T05:13:00.000Z', status: 'completed',
    output: {
      work_type: 'MEDIUM',
      tasks: [{ id: 'task-001', title: 'Login form', description: 'Form, validation, submit', files: ['src/auth.ts'], blocked_by: [] }],
      tech_decisions: ['zod for validation'],
      risk_factors: ['session fixation'],
    },
  }));
  json(path.join(dir, '08-developer-task-001.json'), header(8, 'developer', {
    task_id: 'task-001', agent_id: 'developer-auth-001', timestamp: '2026-02-16T05:16:11.000Z', status: 'completed',
    output: {
      task_id: 'task-001', files_modified: ['src/auth.ts'], files_created: [],
      summary: 'Login form with email/password validation', notes: '',
    },
  }));
  json(path.join(dir, 'jonggrang-tasks.json'), {
    tasks: [{ id: 'task-001', title: 'Login form', status: 'completed', feature_id: fid }],
  });
  fs.writeFileSync(path.join(dir, 'progress.txt'), [
    '# Progress: Add login form with validation',
    '',
    '- setup: manifest created',
    '- architecting: one task, src/auth.ts',
    '',
    '## Interrupted run (2026-02-16T05:10:00.000Z)',
    'Session ended during implementation; resumed from phase 8.',
    '',
    '- implementation: src/auth.ts done',
    '',
  ].join('\n'));

  const eph = path.join(project, '.jonggrang', '.ephemeral');
  fs.mkdirSync(eph, { recursive: true });
  json(path.join(eph, 'feedback-loop-state.json'), {
    active: true, iteration: 2, modified_domains: ['backend'],
    domain_phases: {
      backend: {
        review: { status: 'PENDING', agent: null, timestamp: null },
        testing: { status: 'FAIL', agent: 'tester', timestamp: '2026-02-16T05:25:00.000Z' },
      },
    },
    dirty_bit: true, last_outputs: [], stuck_count: 4,
    created_at: '2026-02-16T05:20:00.000Z', updated_at: '2026-02-16T05:30:00.000Z',
  }, false);
  json(path.join(eph, 'compaction-state.json'), {
    status: 'warn', ratio: 0.77, tokens: 154000,
    message: 'WARNING: Context at 77%. Consider compacting before the next heavy phase.',
    updated_at: '2026-02-16T05:30:30.000Z',
  }, false);
  json(path.join(eph, 'session-roles.json'), { 'sess-abc': 'developer', 'sess-def': 'reviewer' }, false);
  json(path.join(eph, 'orchestration-run.json'), {
    project_id: 'app', started_at: '2026-02-16T04:50:00.000Z', status: 'running', mode: 'host',
    groups: [{
      feature_id: fid, branch: 'feat/add-login-form', title: 'Add login form with validation',
      task_ids: ['task-001'], status: 'running', worktree_path: '/home/u/.jonggrang/worktree/app/add-login-form-mlop4860',
      base_sha: 'b55960aaeb1c8a5ebfc4af26db682ed21c45187b', pid: 999999, started_at: '2026-02-16T04:50:01.000Z',
      finished_at: null, exit_code: null, committed: false, pushed: false, error: null,
      log_tail: ['[phase 10] design-verification started'],
    }],
  }, false);

  const locks = path.join(project, '.jonggrang', 'locks');
  fs.mkdirSync(locks, { recursive: true });
  json(path.join(locks, 'developer-auth-001.lock'),
    { agent_id: 'developer-auth-001', files: ['src/auth.ts'], acquired_at: '2026-02-16T05:26:02.417Z', pid: 4242 }, false);
  json(path.join(locks, 'reviewer-old.lock'),
    { agent_id: 'reviewer-old', files: ['src/auth.test.ts'], acquired_at: '2026-02-16T03:31:02.417Z', pid: 4243 }, false);
  fs.writeFileSync(path.join(locks, 'broken.lock'), 'not json');
  json(path.join(locks, 'no-ts.lock'), { agent_id: 'x', files: [] }, false);

  // 11. A feature folder without a manifest (its progress file keeps the folder in git).
  const bare = path.join(features, 'no-manifest-mlopbad2');
  fs.mkdirSync(bare, { recursive: true });
  fs.writeFileSync(path.join(bare, 'progress.txt'), '- setup started, manifest never written\n');
}
