package model

import "time"

// StageSpan is when a stage last started and when it completed after that start (zero when it has not).
type StageSpan struct {
	Start time.Time
	End   time.Time
}
