// Package audience is the vocabulary of DESIGN 13's audiences, without a
// database: a user's tags (Value, Tags, the rules of their names and
// values), a filter (Filter, a typed tree parsed from its JSON, with the
// path of every refused node) and its meaning (Filter.Match on a Subject,
// the (user, device) pair a filter is judged on). A store compiles the
// same tree into its own query; the evaluator is the reference it is
// tested against.
package audience
