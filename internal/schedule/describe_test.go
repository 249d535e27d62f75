package schedule

import (
	"errors"
	"testing"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		kind, expr, tz string
		want           string
	}{
		{KindCron, "0 9 * * 1-5", "Europe/Berlin", "every weekday at 09:00, Europe/Berlin"},
		{KindCron, "0 9 * * MON-FRI", "Europe/Berlin", "every weekday at 09:00, Europe/Berlin"},
		{KindCron, "30 7 * * *", "", "every day at 07:30, UTC"},
		{KindCron, "30 7 * * *", "UTC", "every day at 07:30, UTC"},
		{KindCron, "0 18 * * 1", "America/New_York", "every Monday at 18:00, America/New_York"},
		{KindCron, "0 18 * * 1,4", "", "every Monday and Thursday at 18:00, UTC"},
		{KindCron, "0 10 * * 0,6", "", "every Saturday and Sunday at 10:00, UTC"},
		{KindCron, "0 10 * * 0", "", "every Sunday at 10:00, UTC"},
		{KindCron, "0 10 * * 0-6", "", "every day at 10:00, UTC"},
		{KindCron, "*/15 * * * *", "Europe/Berlin", "every 15 minutes"},
		{KindCron, "* * * * *", "", "every minute"},
		{KindCron, "5 * * * *", "", "every hour at :05, UTC"},
		{KindCron, "0 */6 * * *", "", "every 6 hours at :00, UTC"},
		{KindCron, "0 9,17 * * 1-5", "Europe/Berlin", "at 09:00 and 17:00 on weekdays, Europe/Berlin"},
		{KindCron, "0 17,9 * * *", "", "at 09:00 and 17:00 every day, UTC"},
		{KindCron, "0 8 * * 1,3,5", "", "every Monday, Wednesday and Friday at 08:00, UTC"},
		{KindCron, "0 8,20 * * 1,3,5", "", "at 08:00 and 20:00 on Mondays, Wednesdays and Fridays, UTC"},
		{KindCron, "0 6 1 * *", "", "on the 1st of every month at 06:00, UTC"},
		{KindCron, "0 6 1,15 * *", "Asia/Tokyo", "on the 1st and 15th of every month at 06:00, Asia/Tokyo"},
		{KindCron, "0 6 22 * *", "", "on the 22nd of every month at 06:00, UTC"},
		{KindCron, "0 6 13 * *", "", "on the 13th of every month at 06:00, UTC"},
		{KindCron, "@daily", "", "every day at 00:00, UTC"},
		{KindCron, "@hourly", "", "every hour at :00, UTC"},
		{KindCron, "@monthly", "", "on the 1st of every month at 00:00, UTC"},
		{"", "0 9 * * *", "", "every day at 09:00, UTC"},
		// Shapes with no short sentence are said as they are.
		{KindCron, "*/7 * * * *", "", "cron */7 * * * *, UTC"},
		{KindCron, "0 9 1 * 1", "Europe/Berlin", "cron 0 9 1 * 1, Europe/Berlin"},
		{KindCron, "0 9 * 1 *", "", "cron 0 9 * 1 *, UTC"},
		{KindCron, "0,30 * * * *", "", "cron 0,30 * * * *, UTC"},
		{KindCron, "0 9-17 * * *", "", "cron 0 9-17 * * *, UTC"},
		{KindCron, "0 */5 * * *", "", "cron 0 */5 * * *, UTC"},
		{KindCron, "@yearly", "", "cron @yearly, UTC"},
		{KindInterval, "every 2h", "", "every 2 hours"},
		{KindInterval, "every 1h", "", "every hour"},
		{KindInterval, "every 30 minutes", "", "every 30 minutes"},
		{KindInterval, "90m", "", "every 1 hour 30 minutes"},
		{KindInterval, "every 2s", "", "every 2 seconds"},
		{KindInterval, "every 1 day", "", "every day"},
		{KindOnce, "2026-12-01T09:00:00Z", "", "once, on 2026-12-01 at 09:00 UTC"},
		{KindOnce, "2026-06-01T09:00:30+02:00", "", "once, on 2026-06-01 at 07:00:30 UTC"},
	}
	for _, tc := range tests {
		t.Run(tc.kind+" "+tc.expr+" "+tc.tz, func(t *testing.T) {
			got, err := Describe(tc.kind, tc.expr, tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Describe(%q, %q, %q) = %q, want %q", tc.kind, tc.expr, tc.tz, got, tc.want)
			}
		})
	}
}

func TestDescribeInvalid(t *testing.T) {
	for _, tc := range []struct{ kind, expr, tz string }{
		{KindCron, "0 9 * *", ""},
		{KindCron, "0 9 * * *", "Mars/Olympus"},
		{KindInterval, "every now and then", ""},
		{KindOnce, "tomorrow", ""},
		{"weekly", "0 9 * * *", ""},
	} {
		if got, err := Describe(tc.kind, tc.expr, tc.tz); !errors.Is(err, ErrInvalid) {
			t.Errorf("Describe(%q, %q, %q) = %q, %v; want ErrInvalid", tc.kind, tc.expr, tc.tz, got, err)
		}
	}
}
