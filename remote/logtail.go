package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"runwatch/model"
	"runwatch/state/runlog"
)

// LogTailCommand is the hidden subcommand that prints the end of a run's log for another runwatch:
// `runwatch __logtail PATH N`. The events stream only carries what is appended after it connects; a remote
// run's timeline starts with this, so its earlier history is there too.
const LogTailCommand = "__logtail"

// LogTail is what LogTailCommand prints: the last entries of the log at Path, with their byte offsets (the
// same offsets the events stream gives appended entries, so the two merge without duplicates), and the
// size they were read up to.
type LogTail struct {
	Protocol int              `json:"protocol"`
	Path     string           `json:"path"`
	Size     int64            `json:"size"`
	Entries  []model.LogEntry `json:"entries"`
}

// MaxTailEntries bounds one LogTail.
const MaxTailEntries = 5000

// ReadLogTail answers LogTailCommand on this machine.
func ReadLogTail(path string, n int) (LogTail, error) {
	entries, size, err := runlog.ReadTail(path, min(n, MaxTailEntries))
	if err != nil {
		return LogTail{}, err
	}
	if entries == nil {
		entries = []model.LogEntry{}
	}
	return LogTail{Protocol: ProtocolVersion, Path: path, Size: size, Entries: entries}, nil
}

// FetchLogTail asks root's host for the last n entries of the log at path (a path on that host).
func (s SSH) FetchLogTail(ctx context.Context, root Root, path string, n int) (LogTail, error) {
	if strings.HasPrefix(path, "-") {
		path = "./" + path
	}
	out, stderr, code, err := s.Run(ctx, root, LogTailCommand, path, strconv.Itoa(n))
	switch {
	case err != nil:
		return LogTail{}, fmt.Errorf("%s: %v", root.Label(), err)
	case code == 2:
		return LogTail{}, fmt.Errorf("%s: its runwatch is older than this one and cannot send a log's history: upgrade it (%s)", root.Label(), InstallHint(root))
	case code != 0:
		return LogTail{}, fmt.Errorf("%s", Explain(root, code, stderr))
	}
	var t LogTail
	if err := json.Unmarshal(out, &t); err != nil {
		return LogTail{}, fmt.Errorf("%s: the log's history is not JSON (%v)", root.Label(), err)
	}
	if msg, ok := protocolSkew(root, t.Protocol); !ok {
		return LogTail{}, errors.New(msg)
	}
	return t, nil
}
