package expr

import "time"

// ParseDuration parses ISO-8601 duration text ("PT1H30M", "P2D"), the form
// timer durations and cycle periods take.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s) }

// ParseDateTime parses ISO-8601 date and time text ("2026-01-01T10:00:00Z";
// no offset means UTC), the form timer dates take.
func ParseDateTime(s string) (time.Time, error) { return parseDateTime(s) }
