package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "1h30m": 90 * time.Minute, "-5m": -5 * time.Minute, "0": 0,
		"PT90S": 90 * time.Second, "PT1H30M": 90 * time.Minute, "P2D": 48 * time.Hour, "P1DT12H": 36 * time.Hour,
		"PT0.5S": 500 * time.Millisecond, "PT1,5S": 1500 * time.Millisecond, "pt30s": 30 * time.Second, "-PT5M": -5 * time.Minute,
		"P1W": 7 * 24 * time.Hour, "PT0S": 0,
	} {
		got, err := parseDuration(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for in, msg := range map[string]string{
		"soon": "not a duration such as 90s, 1h30m or PT1H30M", "P": "no amount", "PT": "no amount", "P1Y": "years and months",
		"P1M": "years and months", "PT1M1H": "out of order", "P1H": "not one of", "PTS": "a number must come before",
		"P1DT": "no amount", "PT1HT2M": "a second T",
	} {
		_, err := parseDuration(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), msg, in)
		}
	}
	for d, want := range map[time.Duration]string{
		0: "PT0S", 90 * time.Second: "PT1M30S", 36 * time.Hour: "P1DT12H", 48 * time.Hour: "P2D",
		500 * time.Millisecond: "PT0.5S", -5 * time.Minute: "-PT5M", 5 * time.Minute: "PT5M",
	} {
		assert.Equal(t, want, isoDuration(d))
		back, err := parseDuration(want)
		require.NoError(t, err)
		assert.Equal(t, d, back, "%s reads back", want)
	}
}

// TestStateFile_Durations: every duration the CLI takes is read in Go's
// form or ISO 8601's.
func TestStateFile_Durations(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)
	p := ft(t, exitOK, state, "advance", "PT90S")
	assert.Equal(t, clock.Epoch.Add(90*time.Second), *p.Now)
	p = ft(t, exitOK, state, "advance", "30s")
	assert.Equal(t, clock.Epoch.Add(2*time.Minute), *p.Now)
	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack", "--timeout", "PT1M"))
	require.Len(t, jobs, 1)
	assert.Equal(t, clock.Epoch.Add(3*time.Minute), *jobs[0].Deadline)
	ft(t, exitOK, state, "fail", itoa(jobs[0].Key), "--backoff", "PT30S", "--activation", itoa(jobs[0].Activation))
	assert.Empty(t, result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack")), "in back-off")
	ft(t, exitOK, state, "advance", "PT30S")
	assert.Len(t, result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack")), 1)
	ft(t, exitOK, state, "publish", "nobody", "--ttl", "PT1H")
	p = ft(t, exitUsage, state, "publish", "nobody", "--ttl", "P1M")
	assert.Contains(t, p.Error.Message, "years and months have no fixed length")
	var out bytes.Buffer
	assert.Equal(t, exitUsage, run([]string{"advance", "--state", state, "--", "-PT1M"}, &out, &out))
	assert.Contains(t, out.String(), "advance: -PT1M is negative: time moves forward only")
}

// TestRun_ScenarioDurations: a scenario's steps take durations too.
func TestRun_ScenarioDurations(t *testing.T) {
	t.Parallel()
	sc := filepath.Join(t.TempDir(), "sc.json")
	require.NoError(t, os.WriteFile(sc, []byte(`{"variables": {"key": "order-1"}, "steps": [
		{"publishMessage": {"name": "nobody", "correlationKey": "x", "ttl": "PT2M"}},
		{"advance": "PT5S"},
		{"publishMessage": {"name": "go", "correlationKey": "order-1"}}]}`), 0o600))
	var out bytes.Buffer
	require.Equal(t, exitOK, run([]string{"run", "testdata/message.bpmn", "--scenario", sc}, &out, &out), out.String())
	assert.Contains(t, out.String(), "nobody received the message: it is kept for PT2M\n")
	assert.Contains(t, out.String(), "advance time by PT5S to 2026-01-01T00:00:05Z\n")

	require.NoError(t, os.WriteFile(sc, []byte(`{"steps": [{"advance": "later"}]}`), 0o600))
	out.Reset()
	assert.Equal(t, exitUsage, run([]string{"run", "testdata/message.bpmn", "--scenario", sc}, &out, &out))
	assert.Contains(t, out.String(), `step 1: advance: "later" is not a duration`)
}
