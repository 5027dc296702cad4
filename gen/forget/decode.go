package forget

import "github.com/scopehygiene/scope-hygiene/gen/internal/strictjson"

// maxDepth is the deepest nesting allowed (FE-R-3): the top-level value is level 1,
// and every object or array opens one more level.
const maxDepth = 64

// jsonNumber is a JSON number kept as its literal text (strictjson.Number).
type jsonNumber = strictjson.Number

// decodeStrict parses body as strict I-JSON (FE-R-3) with the oracles' shared reader.
func decodeStrict(body []byte) (any, error) { return strictjson.Decode(body, maxDepth) }
