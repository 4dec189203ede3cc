package scheduling

import "math"

// coveringSimplex solves the bound's linear program (costbound_test.go) in its primal
// form: buy fractions of offerings so that each class's CPU, memory and pod slots are
// covered, each dimension of an offering going to one class that accepts it. There is
// one row per class and dimension; the columns (an offering with a class per dimension)
// are too many to list, so each step prices every offering against the current dual
// prices and enters the one that gains most (column generation). The basis inverse is
// kept explicitly: it is small (three rows a class).
type coveringSimplex struct {
	offerings []boundOffering
	classes   []*boundClass
	rows      int
	inverse   [][]float64 // the basis inverse, rows × rows
	values    []float64   // the basic variables' values
	costs     []float64   // the basic variables' costs
}

// coveringMaxSteps caps the pivots per row: Dantzig's rule may cycle on a degenerate
// program, and whatever prices it stops at still give a valid bound once scaled.
const coveringMaxSteps = 200

func newCoveringSimplex(offerings []boundOffering, classes []*boundClass) *coveringSimplex {
	rows := boundDims * len(classes)
	s := &coveringSimplex{offerings: offerings, classes: classes, rows: rows,
		inverse: make([][]float64, rows), values: make([]float64, rows), costs: make([]float64, rows)}
	// Start from an artificial column per row, dearer than any offering could make
	// a row worth, so that the first steps drive them out.
	var bigM float64
	for _, o := range offerings {
		bigM = max(bigM, o.price)
	}
	for ci, c := range classes {
		for d := range boundDims {
			r := boundDims*ci + d
			s.inverse[r] = make([]float64, rows)
			s.inverse[r][r] = 1
			s.values[r] = c.demand[d]
			s.costs[r] = bigM * 1e6
		}
	}
	return s
}

// solve pivots until no column gains and returns the dual prices, one per row.
func (s *coveringSimplex) solve() []float64 {
	prices := make([]float64, s.rows)
	for range coveringMaxSteps * s.rows {
		s.dual(prices)
		column, cost := s.entering(prices)
		if column == nil || !s.pivot(column, cost) {
			break
		}
	}
	s.dual(prices)
	return prices
}

// dual sets prices to the basic costs times the basis inverse.
func (s *coveringSimplex) dual(prices []float64) {
	for k := range prices {
		prices[k] = 0
		for r := range s.rows {
			prices[k] += s.costs[r] * s.inverse[r][k]
		}
	}
}

// entering returns the column of most negative reduced cost, and its cost; nil when
// none is negative. A surplus column (row k covered beyond its demand) has reduced
// cost prices[k]; an offering's best column gives each dimension to the accepting
// class that prices it highest.
func (s *coveringSimplex) entering(prices []float64) ([]float64, float64) {
	var column []float64
	var cost float64
	best := 0.0
	for k, p := range prices {
		if p < best {
			best = p
			column, cost = make([]float64, s.rows), 0
			column[k] = -1
		}
	}
	for j := range s.offerings {
		o := &s.offerings[j]
		top, class := o.dearest(s.classes, j, prices)
		if class[0] < 0 {
			continue
		}
		reduced := o.price
		for d := range boundDims {
			reduced -= o.allocatable[d] * top[d]
		}
		if reduced < best && reduced < -1e-9*o.price {
			best = reduced
			column, cost = make([]float64, s.rows), o.price
			for d := range boundDims {
				column[boundDims*class[d]+d] += o.allocatable[d]
			}
		}
	}
	return column, cost
}

// pivot brings column into the basis in place of the row that bounds it first; false
// when nothing bounds it (cannot happen for a covering program with positive prices).
func (s *coveringSimplex) pivot(column []float64, cost float64) bool {
	direction := make([]float64, s.rows)
	for r := range s.rows {
		for k, a := range column {
			direction[r] += s.inverse[r][k] * a
		}
	}
	leave, step := -1, math.Inf(1)
	for r, d := range direction {
		if d > 1e-12 && s.values[r]/d < step {
			leave, step = r, s.values[r]/d
		}
	}
	if leave < 0 {
		return false
	}
	pivot := direction[leave]
	for k := range s.rows {
		s.inverse[leave][k] /= pivot
	}
	for r, d := range direction {
		if r == leave || d == 0 {
			continue
		}
		for k := range s.rows {
			s.inverse[r][k] -= d * s.inverse[leave][k]
		}
		s.values[r] = max(s.values[r]-d*step, 0)
	}
	s.values[leave], s.costs[leave] = step, cost
	return true
}
