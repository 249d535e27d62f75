package e2etest

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of GET /metrics, parsed by Prometheus's text
// parser.
type Metrics map[string]*dto.MetricFamily

// Scrape reads url (a /metrics address) with the bearer token tok ("" for
// none) and parses it; a status other than 200 or an answer that does not
// parse fails the test.
func Scrape(t testing.TB, url, tok string) Metrics {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if f := expfmt.ResponseFormat(resp.Header); f.FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("GET %s: format %s, want the Prometheus text format", url, f)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: the answer does not parse: %v", url, err)
	}
	return mfs
}

// Value is the value of family name's series with the given label pairs
// (a histogram's sample count); -1 when there is no such series.
func (m Metrics) Value(name string, labels ...string) float64 {
	ss := m.series(name, labels)
	if len(ss) == 0 {
		return -1
	}
	return valueOf(ss[0])
}

// Sum adds the values of every series of family name with the given label
// pairs (histograms: their sample counts); 0 when there is none.
func (m Metrics) Sum(name string, labels ...string) float64 {
	total := 0.0
	for _, s := range m.series(name, labels) {
		total += valueOf(s)
	}
	return total
}

// series are those of family name that carry the label pairs.
func (m Metrics) series(name string, labels []string) []*dto.Metric {
	var out []*dto.Metric
next:
	for _, s := range m[name].GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

func valueOf(s *dto.Metric) float64 {
	switch {
	case s.GetCounter() != nil:
		return s.GetCounter().GetValue()
	case s.GetGauge() != nil:
		return s.GetGauge().GetValue()
	case s.GetHistogram() != nil:
		return float64(s.GetHistogram().GetSampleCount())
	}
	return 0
}
