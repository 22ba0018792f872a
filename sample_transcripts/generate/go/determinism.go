package main

import (
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/google/uuid"
)

// The SDK names a new task with uuid.NewV7 (a millisecond clock and random bits), a JSON-RPC request,
// an SSE event and a logged call with uuid.NewString. Both draw their random bits from the uuid
// package's reader, which SetRand replaces with a seeded one; the v7 clock is the package's own
// `timeNow`, which has no setter, so it is stopped here by name. Calls are made one after another,
// so the ids are drawn in the same order on every run.
//
//go:linkname uuidTimeNow github.com/google/uuid.timeNow
var uuidTimeNow func() time.Time

// Clock is the instant every status of the scenarios is stamped with, and what the stopped clocks say.
var Clock = time.Date(2026, 7, 6, 10, 0, 0, 0, time.UTC)

func fixIDs(seed uint64) {
	uuidTimeNow = func() time.Time { return Clock }
	uuid.SetRand(&seededReader{rand.New(rand.NewPCG(seed, seed))})
}

type seededReader struct{ r *rand.Rand }

func (s *seededReader) Read(p []byte) (int, error) {
	var word [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(word[:], s.r.Uint64())
		copy(p[i:], word[:])
	}
	return len(p), nil
}

// fixedLogTimes stops the clock of a slog JSON handler: its records' time is Clock and the durations the
// SDK's logging interceptors measure are zero.
func fixedLogTimes(groups []string, a slog.Attr) slog.Attr {
	switch {
	case len(groups) == 0 && a.Key == slog.TimeKey:
		return slog.Time(slog.TimeKey, Clock)
	case a.Key == "duration_ns":
		return slog.Duration(a.Key, 0)
	}
	return a
}

func at(seconds int) *time.Time {
	t := Clock.Add(time.Duration(seconds) * time.Second)
	return &t
}
