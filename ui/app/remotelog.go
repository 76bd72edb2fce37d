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
// how much it sends, and this is the most it can make us hold for one log.
const (
	maxRemoteLogEntries = 20_000
	maxRemoteLogBytes   = 8 << 20
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
	over := max(len(l.entries)-maxRemoteLogEntries, 0)
	size := 0
	for i := len(l.entries) - 1; i >= over; i-- {
		if size += entrySize(l.entries[i]); size > maxRemoteLogBytes {
			over = i + 1
			break
		}
	}
	if over > 0 {
		l.entries = append([]model.LogEntry(nil), l.entries[over:]...)
	}
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

func (a *App) remoteLog(key string) *remoteLog {
	if a.remoteLogs == nil {
		a.remoteLogs = map[string]*remoteLog{}
	}
	l := a.remoteLogs[key]
	if l == nil {
		l = &remoteLog{}
		a.remoteLogs[key] = l
	}
	return l
}

// KeepRemoteLogs merges streamed log entries of remote runs.
func (a *App) KeepRemoteLogs(appended []LogAppend) {
	for _, ap := range appended {
		l := a.remoteLog(ap.Path)
		if ap.Truncated || ap.Rotated {
			// The host reads the log again from its start: what was kept is another file's, or gone.
			l.entries = nil
		}
		l.upsert(ap.Entries)
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
	l := a.remoteLog(key)
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

// TookRemoteTail merges a fetched tail.
func (a *App) TookRemoteTail(msg RemoteTailMsg) {
	l := a.remoteLog(msg.Key)
	l.fetching = false
	l.fetchedAt = time.Now()
	if msg.err != nil {
		l.err = fmt.Sprintf("the log's history could not be fetched: %v", msg.err)
		return
	}
	l.err = ""
	l.upsert(msg.entries)
}
