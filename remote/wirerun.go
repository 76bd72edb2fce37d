package remote

import "runwatch/model"

// The run, its stages and its resumable detail, field by field as model's writers write them (wiredecode.go
// says why).

// strAs reads a string into a field of a string type.
func strAs[T ~string](d *wireDec, v *T) error {
	s := string(*v)
	if err := d.str(&s); err != nil {
		return err
	}
	*v = T(s)
	return nil
}

// ptr reads an object into *p as encoding/json does: null makes it nil, else it is filled (made when nil).
func ptr[T any](d *wireDec, p **T, fill func(*T) error) error {
	if d.null() {
		*p = nil
		return nil
	}
	if *p == nil {
		*p = new(T)
	}
	return fill(*p)
}

func (d *wireDec) run(r *model.Run) error {
	d.dir, d.checkpointOf = "", d.checkpointOf[:0]
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.str(&r.ID)
		case "kind":
			return strAs(d, &r.Kind)
		case "dir":
			if err := d.str(&r.Dir); err != nil {
				return err
			}
			d.dir = r.Dir
			return nil
		case "title":
			return d.str(&r.Title)
		case "status":
			return strAs(d, &r.Status)
		case "raw_status":
			return d.str(&r.RawStatus)
		case "current_stage":
			return d.str(&r.CurrentStage)
		case "progress":
			return d.object(func(key []byte) error {
				switch string(key) {
				case "done":
					return d.int(&r.Progress.Done)
				case "total":
					return d.int(&r.Progress.Total)
				}
				return d.skip()
			})
		case "stages":
			d.stages, d.checkpointOf = 0, d.checkpointOf[:0]
			return list(d, &r.Stages, d.stage)
		case "flags":
			return list(d, &r.Flags, d.flag)
		case "problems":
			return list(d, &r.Problems, d.problem)
		case "log":
			return ptr(d, &r.Log, func(l *model.LogRef) error {
				return d.object(func(key []byte) error {
					switch string(key) {
					case "path":
						return d.str(&l.Path)
					case "path@":
						return d.inDir(&l.Path)
					case "size_bytes":
						return d.int64(&l.SizeBytes)
					case "undone":
						return d.strs(&l.Undone)
					}
					return d.skip()
				})
			})
		case "state_path":
			return d.str(&r.StatePath)
		case "state_path@":
			return d.inDir(&r.StatePath)
		case "project_root":
			return d.str(&r.ProjectRoot)
		case "archived":
			return d.bool(&r.Archived)
		case "gates":
			return list(d, &r.Gates, d.gate)
		case "crash_signs":
			return d.strs(&r.CrashSigns)
		case "attention":
			return d.attention(&r.Attention)
		case "active_at":
			return d.time(&r.ActiveAt, nil)
		case "resumable":
			return ptr(d, &r.Resumable, d.resumable)
		case "updated_at":
			return d.timeValue(&r.UpdatedAt, &r.UpdatedText)
		case "locks":
			return list(d, &r.Locks, d.lock)
		case "remote":
			return d.raw(&r.Remote)
		case "agent_pane":
			return d.raw(&r.AgentPane)
		case "timing":
			return ptr(d, &r.Timing, d.runTiming)
		case "jonggrang":
			return ptr(d, &r.Jonggrang, d.jonggrang)
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	return d.stageCheckpoints(r)
}

// stageCheckpoints points each stage that said "checkpoint_of" (model.Run.AppendWireJSON) at that checkpoint
// of the run's resumable detail.
func (d *wireDec) stageCheckpoints(r *model.Run) error {
	for _, c := range d.checkpointOf {
		i, at := c[0], c[1]
		if i >= len(r.Stages) || r.Resumable == nil || at < 0 || at >= len(r.Resumable.Checkpoints) {
			return d.errorf("stage %d: checkpoint_of %d is not one of the run's checkpoints", i, at)
		}
		r.Stages[i].Checkpoint = &r.Resumable.Checkpoints[at]
	}
	return nil
}

// inDir reads a path that model.Run.AppendWireJSON wrote without the run's folder ("key@"): "dir" came first.
func (d *wireDec) inDir(s *string) error {
	if !d.compact {
		return d.skip()
	}
	var rel string
	if err := d.str(&rel); err != nil {
		return err
	}
	if d.dir == "" {
		return d.errorf("a path in the run's folder, before the folder")
	}
	*s = d.dir + "/" + rel
	return nil
}

func (d *wireDec) attention(a *model.Attention) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "needs_you":
			return d.bool(&a.NeedsYou)
		case "rank":
			return d.int(&a.Rank)
		case "code":
			return d.str(&a.Code)
		case "reason":
			return d.str(&a.Reason)
		case "action":
			return strAs(d, &a.Action)
		case "command":
			return d.str(&a.Command)
		}
		return d.skip()
	})
}

func (d *wireDec) stage(s *model.Stage) error {
	var said timingSaid
	rare := &d.rare
	*rare = model.StageRare{}
	stage := d.stages
	d.stages++
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "key":
			return d.str(&s.Key)
		case "name":
			return d.str(&s.Name)
		case "status":
			return strAs(d, &s.Status)
		case "error":
			return d.str(&rare.Error)
		case "skip_reason":
			return d.str(&rare.SkipReason)
		case "checklist":
			said.checklist = true
			return list(d, &s.Checklist, func(c *model.ChecklistItem) error {
				return d.object(func(key []byte) error {
					switch string(key) {
					case "key":
						return d.str(&c.Key)
					case "done":
						return d.bool(&c.Done)
					case "raw":
						return d.str(&c.Raw)
					}
					return d.skip()
				})
			})
		case "raw_status":
			return d.str(&rare.RawStatus)
		case "done_key":
			return d.str(&s.DoneKey)
		case "checklist_done_key":
			return d.str(&s.ChecklistDoneKey)
		case "checklist_done":
			return ptr(d, &s.ChecklistDone, d.bool)
		case "order_unknown":
			return d.bool(&rare.OrderUnknown)
		case "checkpoint":
			return ptr(d, &s.Checkpoint, d.checkpoint)
		case "checkpoint_of":
			if !d.compact {
				return d.skip()
			}
			at := -1
			if err := d.int(&at); err != nil {
				return err
			}
			d.checkpointOf = append(d.checkpointOf, [2]int{stage, at})
			return nil
		case "warnings":
			return d.strs(&rare.Warnings)
		case "started_at":
			return d.time(&s.StartedAt, &rare.StartedText)
		case "completed_at":
			return d.time(&s.CompletedAt, &rare.CompletedText)
		case "output_files":
			return d.raw(&rare.OutputFiles)
		case "timing":
			return ptr(d, &s.Timing, func(t *model.StageTiming) error { return d.stageTiming(t, &said) })
		}
		return d.skip()
	})
	s.SetRare(*rare)
	if d.compact && !said.checklist {
		s.Checklist = []model.ChecklistItem{} // model.Run.AppendWireJSON leaves out an empty one
	}
	if d.compact && s.Timing != nil {
		// model.Run.AppendWireJSON left out what started_at and completed_at say.
		if !said.started {
			s.Timing.Started = s.StartedAt
		}
		if !said.ended {
			s.Timing.Ended = s.CompletedAt
		}
	}
	return err
}

// timingSaid is which of a stage's checklist and timing's times its line said, null included.
type timingSaid struct{ checklist, started, ended bool }

func (d *wireDec) checkpoint(c *model.Checkpoint) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "file":
			var p string
			err := d.str(&p)
			c.SetFile(p)
			return err
		case "file@":
			var p string
			err := d.inDir(&p)
			c.SetFile(p)
			return err
		case "stage":
			return d.str(&c.Stage)
		case "status":
			return d.str(&c.Status)
		case "timestamp":
			return d.time(&c.Timestamp, nil)
		}
		return d.skip()
	})
}

func (d *wireDec) kvs(out *[]model.KV) error {
	return list(d, out, func(kv *model.KV) error {
		return d.object(func(key []byte) error {
			switch string(key) {
			case "key":
				return d.str(&kv.Key)
			case "value":
				return d.str(&kv.Value)
			}
			return d.skip()
		})
	})
}

// packedKVs is kvs for the keys a host's run keeps packed (model.KVs).
func (d *wireDec) packedKVs(out *model.KVs) error {
	var list []model.KV
	if err := d.kvs(&list); err != nil {
		return err
	}
	*out = model.PackKVs(list)
	return nil
}

func (d *wireDec) resumable(r *model.ResumableDetail) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "run_id":
			return d.str(&r.RunID)
		case "task_name":
			return d.str(&r.TaskName)
		case "checklist_path":
			return d.str(&r.ChecklistPath)
		case "checklist_path@":
			return d.inDir(&r.ChecklistPath)
		case "lock_file":
			return d.str(&r.LockFile)
		case "lock_file@":
			return d.inDir(&r.LockFile)
		case "keys":
			return d.packedKVs(&r.Keys)
		case "checklist_keys":
			return d.packedKVs(&r.ChecklistKeys)
		case "resume_hint":
			return d.str(&r.ResumeHint)
		case "resume_target":
			return d.str(&r.ResumeTarget)
		case "last_completed":
			return d.str(&r.LastCompleted)
		case "checkpoints":
			return list(d, &r.Checkpoints, d.checkpoint)
		case "artifacts":
			return d.strs(&r.Artifacts)
		case "stage_order_source":
			return d.str(&r.StageOrderSource)
		case "plan_path":
			return d.str(&r.PlanPath)
		case "plan_note":
			return d.str(&r.PlanNote)
		case "stage_order_uncertain":
			return d.bool(&r.StageOrderUncertain)
		case "stage_order_evidence":
			return d.strs(&r.StageOrderEvidence)
		case "reopens_without_checkpoint":
			return d.bool(&r.ReopensWithoutCheckpoint)
		case "checkpoint_dir":
			return d.str(&r.CheckpointDir)
		case "checkpoint_dir@":
			return d.inDir(&r.CheckpointDir)
		case "last_error":
			return d.str(&r.LastError)
		case "ledger":
			return d.raw(&r.Ledger)
		case "stage_next":
			return d.raw(&r.StageNext)
		case "blocked":
			return d.raw(&r.Blocked)
		}
		return d.skip()
	})
}

// int64p reads a number into a *int64 field as encoding/json does: null makes it nil.
func (d *wireDec) int64p(p **int64) error {
	return ptr(d, p, d.int64)
}

func (d *wireDec) stageTiming(t *model.StageTiming, said *timingSaid) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "started":
			said.started = true
			return d.time(&t.Started, nil)
		case "ended":
			said.ended = true
			return d.time(&t.Ended, nil)
		case "usual":
			if !d.compact {
				return d.skip()
			}
			// AppendWireJSON's [median, p90, low, high].
			usual := [...]**int64{&t.UsualMedianSeconds, &t.UsualP90Seconds, &t.UsualLowSeconds, &t.UsualHighSeconds}
			i := 0
			return d.array(func() error {
				if i == len(usual) {
					return d.errorf("more than %d usual durations", len(usual))
				}
				i++
				return d.int64p(usual[i-1])
			})
		case "usual_median_seconds":
			return d.int64p(&t.UsualMedianSeconds)
		case "usual_p90_seconds":
			return d.int64p(&t.UsualP90Seconds)
		case "usual_low_seconds":
			return d.int64p(&t.UsualLowSeconds)
		case "usual_high_seconds":
			return d.int64p(&t.UsualHighSeconds)
		case "runs":
			return d.int(&t.Runs)
		case "elapsed_seconds":
			return d.int64p(&t.ElapsedSeconds)
		}
		return d.skip()
	})
}

func (d *wireDec) runTiming(t *model.RunTiming) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "task":
			return d.str(&t.Task)
		case "started":
			return d.time(&t.Started, nil)
		case "remaining_after_current_seconds":
			return d.int64p(&t.RemainingSeconds)
		case "runs":
			return d.int(&t.Runs)
		case "elapsed_seconds":
			return d.int64p(&t.ElapsedSeconds)
		case "eta_seconds":
			return d.int64p(&t.ETASeconds)
		}
		return d.skip()
	})
}

func (d *wireDec) lock(l *model.Lock) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "path":
			return d.str(&l.Path)
		case "holder":
			return d.str(&l.Holder)
		case "pid":
			return d.int(&l.PID)
		case "host":
			return d.str(&l.Host)
		case "user":
			return d.str(&l.User)
		case "run_id":
			return d.str(&l.RunID)
		case "files":
			return d.strs(&l.Files)
		case "acquired_at":
			return d.time(&l.AcquiredAt, nil)
		case "age_seconds":
			return d.int64(&l.AgeSeconds)
		case "verdict":
			return strAs(d, &l.Verdict)
		case "reasons":
			return d.strs(&l.Reasons)
		case "judged_on":
			return d.str(&l.JudgedOn)
		case "parse_error":
			return d.str(&l.ParseError)
		case "shared":
			return d.bool(&l.Shared)
		}
		return d.skip()
	})
}

// jonggrang reads a jonggrang run's detail: its agents and phase outputs field by field, its tasks, groups
// and gates (fewer, or rare) by encoding/json.
func (d *wireDec) jonggrang(j *model.JonggrangDetail) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "work_type":
			return d.str(&j.WorkType)
		case "pipeline_mode":
			return d.str(&j.PipelineMode)
		case "has_ui":
			return d.bool(&j.HasUI)
		case "created_at":
			return d.time(&j.CreatedAt, &j.CreatedText)
		case "active_phases":
			return d.strs(&j.ActivePhases)
		case "agents":
			return list(d, &j.Agents, d.agent)
		case "phase_outputs":
			return list(d, &j.PhaseOutputs, d.phaseOutput)
		case "progress_tail":
			return d.strs(&j.ProgressTail)
		case "worktree_copy_of":
			return d.str(&j.WorktreeCopyOf)
		case "context_usage":
			return d.raw(&j.ContextUsage)
		case "tasks":
			return d.raw(&j.Tasks)
		case "interruptions":
			return d.raw(&j.Interruptions)
		case "feedback":
			return d.raw(&j.Feedback)
		case "compaction":
			return d.raw(&j.Compaction)
		case "session_roles":
			return d.raw(&j.SessionRoles)
		case "groups":
			return d.raw(&j.Groups)
		}
		return d.skip()
	})
}

func (d *wireDec) agent(a *model.Agent) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.str(&a.ID)
		case "role":
			return d.str(&a.Role)
		case "status":
			return d.str(&a.Status)
		case "started_at":
			return d.time(&a.StartedAt, &a.StartedText)
		case "completed_at":
			return d.time(&a.CompletedAt, &a.CompletedText)
		case "locked_files":
			return d.strs(&a.LockedFiles)
		}
		return d.skip()
	})
}

func (d *wireDec) phaseOutput(o *model.PhaseOutput) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "file":
			return d.str(&o.File)
		case "phase":
			return d.str(&o.Phase)
		case "role":
			return d.str(&o.Role)
		case "task_id":
			return d.str(&o.TaskID)
		case "agent_id":
			return d.str(&o.AgentID)
		case "status":
			return d.str(&o.Status)
		case "timestamp":
			return d.time(&o.Timestamp, nil)
		case "summary":
			return d.strs(&o.Summary)
		case "error":
			return d.str(&o.Error)
		case "approved":
			return ptr(d, &o.Approved, d.bool)
		case "tests_passed":
			return ptr(d, &o.TestsPassed, d.bool)
		case "required_fixes":
			return d.strs(&o.RequiredFix)
		case "failed_tests":
			return d.strs(&o.FailedTests)
		case "files":
			return d.strs(&o.FilesTouched)
		}
		return d.skip()
	})
}

func (d *wireDec) flag(f *model.Flag) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "group":
			return d.str(&f.Group)
		case "name":
			return d.str(&f.Name)
		case "value":
			return d.bool(&f.Value)
		case "raw":
			return d.str(&f.Raw)
		}
		return d.skip()
	})
}

func (d *wireDec) problem(p *model.Problem) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "severity":
			return strAs(d, &p.Severity)
		case "code":
			return d.str(&p.Code)
		case "message":
			return d.str(&p.Message)
		case "path":
			return d.str(&p.Path)
		}
		return d.skip()
	})
}

func (d *wireDec) gate(g *model.Gate) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "name":
			return d.str(&g.Name)
		case "status":
			return d.str(&g.Status)
		case "blocked":
			return d.bool(&g.Blocked)
		case "detail":
			return d.str(&g.Detail)
		}
		return d.skip()
	})
}
