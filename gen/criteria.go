package gen

import (
	_ "embed"
	"encoding/json"
	"sync"
)

// criteriaJSON is a verbatim copy of the published criteria
// (/work/shared/seeds/scope-hygiene-criteria-v1.json). Every text that must be
// reproduced verbatim (matrix notes, scope_text, honesty_line, undeclared_label)
// is read from it.
//
//go:embed criteria-v1.json
var criteriaJSON []byte

// matrixCell is one (status, note) entry of the assessability matrix.
type matrixCell struct {
	Status string `json:"status"`
	Note   string `json:"note"`
}

type publishedCriteria struct {
	CriteriaID          string                                      `json:"criteria_id"`
	CriteriaRevision    string                                      `json:"criteria_revision"`
	ScopeText           string                                      `json:"scope_text"`
	HonestyLine         string                                      `json:"honesty_line"`
	UndeclaredLabel     string                                      `json:"undeclared_label"`
	AssessabilityMatrix map[string]map[string]map[string]matrixCell `json:"assessability_matrix"`
	Corpus              struct {
		ID string `json:"id"`
	} `json:"corpus"`
	InputContract struct {
		Caps struct {
			BodyBytes       int `json:"body_bytes"`
			RecordsPerAudit int `json:"records_per_audit"`
		} `json:"caps"`
	} `json:"input_contract"`
}

var (
	criteriaOnce sync.Once
	criteriaVal  publishedCriteria
	criteriaErr  error
)

var errCriteria = errVal("gen: embedded criteria cannot be read")

type errVal string

func (e errVal) Error() string { return string(e) }

// criteria returns the parsed embedded criteria.
func criteria() (*publishedCriteria, error) {
	criteriaOnce.Do(func() {
		if err := json.Unmarshal(criteriaJSON, &criteriaVal); err != nil {
			criteriaErr = errCriteria
			return
		}
		if criteriaVal.ScopeText == "" || criteriaVal.HonestyLine == "" || criteriaVal.UndeclaredLabel == "" ||
			criteriaVal.InputContract.Caps.BodyBytes != BodyBytesCap || criteriaVal.InputContract.Caps.RecordsPerAudit != RecordCap {
			criteriaErr = errCriteria
		}
	})
	if criteriaErr != nil {
		return nil, criteriaErr
	}
	return &criteriaVal, nil
}
