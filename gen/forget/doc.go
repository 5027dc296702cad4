// Package forget is the independent oracle of memory-forget-envelope/v1, the
// forget-then-reinsert escalation audit, written from the seed and the criteria
// text (docs/forget-envelope.md, criteria/forget-envelope.yaml) alone.
//
// It decodes a mutation-log export under the published input contract, answers the
// first refusal that holds, replays the log, and states the seven factors, the
// verdict prefix and the coverage exactly as the text defines them. It also writes
// the rule set's corpus (hand-built edge cases per reading, refusal and NOT
// ASSESSABLE reason, the regression cases of each revision, and seeded random
// logs) and checks case files written by others against its own answers. It never
// imports the engine (rules/, evaluator/) nor CEL: that independence is its
// purpose.
package forget
