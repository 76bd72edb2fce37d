// Logs of remote runs: the lines their host streams, kept per log up to a bound, and the history fetched
// when a remote run's timeline opens.

package app

import (
	"context"
	"fmt"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
)

// RemoteLogFunc fetches the last entries of a remote run's log from its host (package cli asks the remote
// runwatch over ssh). Entries carry their byte offsets in that file.
type RemoteLogFunc func(ctx context.Context, run model.Run) ([]model.LogEntry, error)

// maxRemoteLogEntries and maxRemoteLogBytes bound what is kept of each remote run's log: its host decides
// how much it sends, and this is the most it can make us hold for one log. maxRemoteLogsBytes bounds all of
// them together, each log counted with logOverhead besides its entries, so that also bounds how many logs are
// kept: a host with many runs (or one that adds, streams and removes runs over and over) cannot multiply the
// per-log bound. Past it the logs least recently used are dropped whole (never the selected run's): their
// lines are still on the host, and opening such a run's timeline fetches its tail again.
const (
	maxRemoteLogEntries = 20_000
	maxRemoteLogBytes   = 8 << 20
	maxRemoteLogsBytes  = 64 << 20
	logOverhead         = 512
)

// remoteLog is a remote run's log as far as it is known here: the tail fetched when its timeline was opened
// and the entries its host streamed, merged by byte offset, so an entry both fetched and streamed (or
// streamed again, grown by continuation lines) is there once.
type remoteLog struct {
	entries []model.LogEntry // sorted by Offset
	// fetchedAt is when the tail was last fetched; fetching while a fetch is on its way; err its failure.
	fetchedAt time.Time
	fetching  bool
	err       string
	// size is what entries hold (entrySize); used orders the logs for dropping (App.remoteUse).
	size int
	used uint64
}

func (l *remoteLog) upsert(more []model.LogEntry) {
	for _, e := range more {
		i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].Offset >= e.Offset })
		switch {
		case i < len(l.entries) && l.entries[i].Offset == e.Offset:
			// The same entry again, perhaps grown by continuation lines: a tail read before the stream's
			// latest word on it must not shrink it back.
			if len(e.Continuation) >= len(l.entries[i].Continuation) {
				l.entries[i] = e
			}
		case i == len(l.entries):
			l.entries = append(l.entries, e)
		default:
			l.entries = append(l.entries, model.LogEntry{})
			copy(l.entries[i+1:], l.entries[i:])
			l.entries[i] = e
		}
	}
	l.trim()
}

// trim keeps the newest entries within the per-log bounds and sets size.
func (l *remoteLog) trim() {
	start, size := len(l.entries), 0
	for start > 0 && len(l.entries)-start < maxRemoteLogEntries && size+entrySize(l.entries[start-1]) <= maxRemoteLogBytes {
		start--
		size += entrySize(l.entries[start])
	}
	if start > 0 {
		l.entries = append([]model.LogEntry(nil), l.entries[start:]...)
	}
	l.size = size
}

func entrySize(e model.LogEntry) int {
	n := len(e.Message) + len(e.Event) + 64
	for _, c := range e.Continuation {
		n += len(c)
	}
	for _, kv := range e.Fields {
		n += len(kv.Key) + len(kv.Value)
	}
	return n
}

// remoteLog is the log kept under key, made when there is none (created says so), marked as just used.
func (a *App) remoteLog(key string) (l *remoteLog, created bool) {
	if a.remoteLogs == nil {
		a.remoteLogs = map[string]*remoteLog{}
	}
	l = a.remoteLogs[key]
	if l == nil {
		l, created = &remoteLog{}, true
		a.remoteLogs[key] = l
	}
	a.remoteUse++
	l.used = a.remoteUse
	return l, created
}

// change runs fn on the log kept under key and keeps the total held up to date.
func (a *App) changeRemoteLog(key string, fn func(l *remoteLog)) (created bool) {
	l, created := a.remoteLog(key)
	before := l.size
	fn(l)
	a.remoteLogBytes += l.size - before
	return created
}

// RemoteLogBytes is what the remote logs hold together, as bounded by maxRemoteLogsBytes.
func (a *App) RemoteLogBytes() int { return a.remoteLogBytes + logOverhead*len(a.remoteLogs) }

// KeepRemoteLogs merges streamed log entries of remote runs. A log no held run has is not kept (the entries
// of a run that went in the same batch), so the logs kept are at most one for each run shown.
func (a *App) KeepRemoteLogs(appended []LogAppend) {
	var created []string
	for _, ap := range appended {
		if a.changeRemoteLog(ap.Path, func(l *remoteLog) {
			if ap.Truncated || ap.Rotated {
				// The host reads the log again from its start: what was kept is another file's, or gone.
				l.entries = nil
			}
			l.upsert(ap.Entries)
		}) {
			created = append(created, ap.Path)
		}
	}
	a.ForgetRemoteLogs(created, false)
	a.boundRemoteLogs()
}

// ForgetRemoteLogs drops the kept logs among keys that no held run has as its log: called with the log keys
// of runs removed (or whose log moved), so a run gone takes its log with it. all asks of every kept log.
func (a *App) ForgetRemoteLogs(keys []string, all bool) {
	ask := map[string]bool{}
	for _, k := range keys {
		if _, ok := a.remoteLogs[k]; ok {
			ask[k] = true
		}
	}
	if all {
		for k := range a.remoteLogs {
			ask[k] = true
		}
	}
	if len(ask) == 0 {
		return
	}
	for _, r := range a.Runs {
		if r.Remote != nil {
			delete(ask, RemoteLogKey(*r))
		}
	}
	for k := range ask {
		a.dropRemoteLog(k)
	}
}

func (a *App) dropRemoteLog(key string) {
	if l, ok := a.remoteLogs[key]; ok {
		a.remoteLogBytes -= l.size
		delete(a.remoteLogs, key)
	}
}

// boundRemoteLogs drops the least recently used logs, never the selected run's, while all of them together
// hold more than maxRemoteLogsBytes.
func (a *App) boundRemoteLogs() {
	selected := ""
	if r, ok := a.SelectedRun(); ok {
		selected = RemoteLogKey(r)
	}
	for a.RemoteLogBytes() > maxRemoteLogsBytes {
		oldest, at := "", uint64(0)
		for k, l := range a.remoteLogs {
			if k != selected && (oldest == "" || l.used < at) {
				oldest, at = k, l.used
			}
		}
		if oldest == "" {
			return
		}
		a.dropRemoteLog(oldest)
	}
}

// RemoteLines is a remote run's log as timeline lines, or a line saying what is coming.
func (a *App) RemoteLines(run model.Run) []string {
	l := a.remoteLogs[RemoteLogKey(run)]
	if l == nil || len(l.entries) == 0 {
		switch {
		case l != nil && l.fetching:
			return []string{"(" + run.Remote.Host + ": fetching the log's history…)"}
		case l != nil && l.err != "":
			return []string{"(" + l.err + "; log lines appear here as the host appends them)"}
		}
		return []string{"(" + run.Remote.Host + ": log lines appear here as the host appends them)"}
	}
	var lines []string
	if l.err != "" {
		lines = append(lines, "("+l.err+"; below: what the host streamed since)")
	}
	for _, e := range l.entries {
		if e.HasTime || !e.Time.IsZero() {
			lines = append(lines, "["+e.Time.UTC().Format("2006-01-02T15:04:05Z")+"] "+e.Message)
		} else if e.Message != "" {
			lines = append(lines, e.Message)
		}
		lines = append(lines, e.Continuation...)
	}
	return lines
}

// RemoteTailMsg carries a fetched tail of a remote run's log.
type RemoteTailMsg struct {
	Key     string
	entries []model.LogEntry
	err     error
}

// FetchRemoteTail starts fetching the tail of run's log when its timeline is opened, unless it was fetched
// since its host last came live (a reconnect may have missed lines: the stream only carries what is
// appended while connected).
func (a *App) FetchRemoteTail(run model.Run) tea.Cmd {
	key := RemoteLogKey(run)
	if key == "" || a.Opts.RemoteLog == nil {
		return nil
	}
	l, _ := a.remoteLog(key)
	if l.fetching {
		return nil
	}
	if !l.fetchedAt.IsZero() {
		liveSince := time.Time{}
		for _, h := range a.Hosts {
			if h.Host == run.Remote.Host && h.State == model.HostLive {
				liveSince = h.Since
			}
		}
		if liveSince.IsZero() || !liveSince.After(l.fetchedAt) {
			return nil
		}
	}
	l.fetching = true
	fetch := a.Opts.RemoteLog
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		entries, err := fetch(ctx, run)
		return RemoteTailMsg{Key: key, entries: entries, err: err}
	}
}

// TookRemoteTail merges a fetched tail (unless its run went while it was fetched).
func (a *App) TookRemoteTail(msg RemoteTailMsg) {
	created := a.changeRemoteLog(msg.Key, func(l *remoteLog) {
		l.fetching = false
		l.fetchedAt = time.Now()
		if msg.err != nil {
			l.err = fmt.Sprintf("the log's history could not be fetched: %v", msg.err)
			return
		}
		l.err = ""
		l.upsert(msg.entries)
	})
	if created {
		a.ForgetRemoteLogs([]string{msg.Key}, false)
	}
	a.boundRemoteLogs()
}
