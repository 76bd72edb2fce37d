package jonggrang

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"runwatch/model"
)

// EphemeralDir is <project>/.jonggrang/.ephemeral, the gitignored gate state.
func EphemeralDir(projectRoot string) string {
	return filepath.Join(projectRoot, ".jonggrang", ".ephemeral")
}

// problemSink collects problems for a run while files are read.
type problemSink []model.Problem

func (p *problemSink) add(sev model.Severity, code, path, format string, args ...any) {
	*p = append(*p, model.Problem{Severity: sev, Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

// readJSONFile reads an optional JSON file into v. A missing file is not a problem (ok=false, nothing
// added); any other failure adds a file-unparsable or unreadable warning naming the file.
func readJSONFile(path string, v any, probs *problemSink) bool {
	data, _, err := readCapped(path, maxJSONBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		var big *errTooLarge
		if errors.As(err, &big) {
			probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: %v; not read", path, err)
			return false
		}
		probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: cannot read: %v", path, err)
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: not valid JSON of the expected shape: %s", path, jsonErrText(err, data))
		return false
	}
	return true
}

// feedbackFile is .ephemeral/feedback-loop-state.json (docs/FORMATS.md A.5).
type feedbackFile struct {
	Active          bool                                   `json:"active"`
	Iteration       int                                    `json:"iteration"`
	ModifiedDomains []string                               `json:"modified_domains"`
	DomainPhases    map[string]map[string]feedbackSubPhase `json:"domain_phases"`
	DirtyBit        bool                                   `json:"dirty_bit"`
	StuckCount      int                                    `json:"stuck_count"`
}

type feedbackSubPhase struct {
	Status string `json:"status"`
}

// escalationAfter is the convention's threshold: the Escalation Advisor starts when stuck_count > 3.
const escalationAfter = 3

// readFeedback judges the feedback-loop exit gate the way the stop hook does: it blocks when the loop is
// active, the dirty bit is set and some domain has a sub-phase that has not passed.
func readFeedback(root string, probs *problemSink) (*model.FeedbackGate, *model.Gate) {
	path := filepath.Join(EphemeralDir(root), "feedback-loop-state.json")
	var f feedbackFile
	if !readJSONFile(path, &f, probs) {
		return nil, nil
	}
	g := &model.FeedbackGate{Active: f.Active, Iteration: f.Iteration, DirtyBit: f.DirtyBit, StuckCount: f.StuckCount}
	// The exit gate counts only modified_domains (checkExitGate); recordPhaseResult may record results for
	// other domains, which never block. A modified domain with no results at all has not passed.
	var pending, uncounted []string
	counted := map[string]bool{}
	for _, d := range f.ModifiedDomains {
		if counted[d] {
			continue
		}
		counted[d] = true
		subs := make([]string, 0, len(f.DomainPhases[d]))
		for s := range f.DomainPhases[d] {
			subs = append(subs, s)
		}
		sort.Strings(subs)
		var notPassed []string
		if _, ok := f.DomainPhases[d]; !ok {
			notPassed = append(notPassed, "no results recorded")
		}
		for _, s := range subs {
			if st := f.DomainPhases[d][s].Status; !strings.EqualFold(st, "PASS") {
				notPassed = append(notPassed, fmt.Sprintf("%s %s", truncate(s, 40), truncate(st, 20)))
			}
		}
		if len(notPassed) > 0 {
			g.BlockedDomains = append(g.BlockedDomains, d)
			pending = append(pending, fmt.Sprintf("%s (%s)", truncate(d, 40), strings.Join(notPassed, ", ")))
		}
	}
	for d := range f.DomainPhases {
		if !counted[d] {
			uncounted = append(uncounted, truncate(d, 40))
		}
	}
	sort.Strings(uncounted)
	g.Blocked = f.Active && f.DirtyBit && len(g.BlockedDomains) > 0
	g.Escalation = f.StuckCount > escalationAfter

	gate := &model.Gate{Name: "feedback-loop", Blocked: g.Blocked}
	switch {
	case g.Blocked:
		gate.Status = "blocked"
	case !f.Active:
		gate.Status = "inactive"
	default:
		gate.Status = "open"
	}
	detail := []string{fmt.Sprintf("iteration %d", f.Iteration)}
	if len(f.ModifiedDomains) > 0 {
		detail = append(detail, "modified: "+strings.Join(limit(f.ModifiedDomains, summaryItems), ", "))
	}
	if f.DirtyBit {
		detail = append(detail, "dirty")
	}
	if len(pending) > 0 {
		detail = append(detail, "not passed: "+strings.Join(pending, "; "))
	}
	if len(uncounted) > 0 {
		detail = append(detail, "not counted (not in modified_domains): "+strings.Join(limit(uncounted, summaryItems), ", "))
	}
	if f.StuckCount > 0 {
		detail = append(detail, fmt.Sprintf("stuck %d", f.StuckCount))
	}
	if g.Escalation {
		detail = append(detail, "escalation")
	}
	gate.Detail = strings.Join(detail, ", ")

	if g.Blocked {
		probs.add(model.SeverityWarning, model.CodeFeedbackGate, path,
			"feedback loop blocks exit: %s", strings.Join(pending, "; "))
	}
	if g.Escalation {
		probs.add(model.SeverityWarning, model.CodeFeedbackEscalation, path,
			"feedback loop is stuck (stuck_count %d > %d): escalation", f.StuckCount, escalationAfter)
	}
	return g, gate
}

// compactionFile is .ephemeral/compaction-state.json (docs/FORMATS.md A.6), from the gate or from hooks.
type compactionFile struct {
	Status    string   `json:"status"`
	Ratio     float64  `json:"ratio"`
	Tokens    *float64 `json:"tokens"`
	Message   string   `json:"message"`
	UpdatedAt string   `json:"updated_at"`
}

// compactionCacheTTL is how long the convention trusts a cached compaction state.
const compactionCacheTTL = 5 * time.Minute

func readCompaction(root string, env model.Env, probs *problemSink) (*model.CompactionGate, *model.Gate) {
	path := filepath.Join(EphemeralDir(root), "compaction-state.json")
	var f compactionFile
	if !readJSONFile(path, &f, probs) {
		return nil, nil
	}
	status := strings.ToLower(strings.TrimSpace(f.Status))
	g := &model.CompactionGate{Status: f.Status, Ratio: f.Ratio, Message: truncate(f.Message, 1<<10)}
	if f.Tokens != nil && *f.Tokens >= 0 && *f.Tokens < 1<<53 {
		t := int64(*f.Tokens)
		g.Tokens = &t
	}
	gate := &model.Gate{Name: "compaction", Status: f.Status, Blocked: status == "block"}
	detail := fmt.Sprintf("context %.0f%%", f.Ratio*100)
	if g.Tokens != nil {
		detail += fmt.Sprintf(" (%d tokens)", *g.Tokens)
	}
	if t, ok := parseTime(f.UpdatedAt); ok {
		g.UpdatedAt = &t
		g.TrustedUntil = t.Add(compactionCacheTTL)
		if age := env.Now.Sub(t); age > compactionCacheTTL {
			// The gate ignores a cached state this old and measures again before the next heavy phase: what
			// it says is information, not a block.
			g.Stale = true
			gate.Status, gate.Blocked = "stale", false
			// The age is kept apart so the dashboard renders it when it draws (Gate.DetailAt).
			gate.SetDetailAged(fmt.Sprintf("last measured %s, %s; ", truncate(f.Status, 20), detail), t,
				fmt.Sprintf(" ago, older than the %s the gate trusts: it measures again before the next heavy phase",
					model.HumanDuration(compactionCacheTTL)), env.Now)
			detail = gate.Detail
		}
	}
	gate.Detail = detail
	switch {
	case g.Stale:
		probs.add(model.SeverityInfo, model.CodeCompactionStale, path, "compaction state is stale, not blocking: %s", detail)
	case status == "ok", status == "warn":
	case status == "must":
		probs.add(model.SeverityWarning, model.CodeCompactionMust, path, "compaction must run before the next heavy phase: %s", detail)
	case status == "block":
		probs.add(model.SeverityWarning, model.CodeCompactionBlock, path, "compaction gate blocks heavy phases: %s", detail)
	default:
		probs.add(model.SeverityWarning, model.CodeUnknownStatus, path, "%s: unknown compaction status %q", path, truncate(f.Status, 40))
	}
	return g, gate
}

func readSessionRoles(root string, probs *problemSink) map[string]string {
	path := filepath.Join(EphemeralDir(root), "session-roles.json")
	var roles map[string]string
	if !readJSONFile(path, &roles, probs) || len(roles) == 0 {
		return nil
	}
	return roles
}

// orchestrationFile is .ephemeral/orchestration-run.json, written by the web server (docs/FORMATS.md A.8).
type orchestrationFile struct {
	Status string              `json:"status"`
	Groups []orchestrationItem `json:"groups"`
}

type orchestrationItem struct {
	FeatureID    string `json:"feature_id"`
	Title        string `json:"title"`
	Status       string `json:"status"`
	WorktreePath string `json:"worktree_path"`
	// pid and error are read leniently: a string pid or a structured error should not hide every group.
	PID       json.RawMessage `json:"pid"`
	StartedAt string          `json:"started_at"`
	Error     json.RawMessage `json:"error"`
}

// pidReuseSlack matches the model's tolerance between a process start time and a recorded timestamp.
const pidReuseSlack = 2 * time.Second

// readGroups reads the parallel-run snapshot and judges each group's liveness by its pid, as the server
// itself does: the status field says what was true when the file was last written.
func readGroups(root string, env model.Env, probs *problemSink) []model.Group {
	path := filepath.Join(EphemeralDir(root), "orchestration-run.json")
	var f orchestrationFile
	if !readJSONFile(path, &f, probs) {
		return nil
	}
	groups := make([]model.Group, 0, len(f.Groups))
	anyAlive := false
	for _, it := range f.Groups {
		g := model.Group{FeatureID: it.FeatureID, Title: truncate(it.Title, 200), Status: it.Status, WorktreePath: it.WorktreePath}
		g.Error = truncate(jsonText(it.Error), 1<<10)
		// Only a group the file says is active can be alive: the pid of a finished group may belong to any
		// later process.
		active := strings.EqualFold(g.Status, "running") || strings.EqualFold(g.Status, "queued")
		if pid := jsonPID(it.PID); len(it.PID) > 0 && !isJSONNull(it.PID) && pid > 0 && pid < 1<<22 {
			g.PID = pid
		}
		if active && g.PID > 0 {
			g.Alive = env.Proc != nil && env.Proc.Alive(g.PID)
			if g.Alive {
				if started, ok := parseTime(it.StartedAt); ok {
					if pstart, ok := env.Proc.StartTime(g.PID); ok && pstart.After(started.Add(pidReuseSlack)) {
						g.Alive = false // the pid now belongs to a later process
					}
				}
			}
		}
		anyAlive = anyAlive || g.Alive
		groups = append(groups, g)
	}
	for i := range groups {
		g := &groups[i]
		switch strings.ToLower(g.Status) {
		case "running":
			// Without a pid only the server being gone (no live group at all) says it stopped.
			g.Interrupted = !g.Alive && (g.PID > 0 || !anyAlive)
		case "queued":
			g.Interrupted = !anyAlive
		case "interrupted":
			g.Interrupted = true
		case "completed", "failed", "cancelled":
		default:
			probs.add(model.SeverityWarning, model.CodeUnknownStatus, path, "%s: group %s has unknown status %q", path, truncate(g.FeatureID, 60), truncate(g.Status, 40))
		}
	}
	return groups
}
