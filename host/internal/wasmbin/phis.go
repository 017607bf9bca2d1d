package wasmbin

import "math"

// phiModel estimates, as a function is validated, the work of wazero's
// redundant-phi elimination on it, which no deadline interrupts.
//
// wazero's SSA builder gives a block a parameter (a phi) for each value a
// control edge carries to it (a block's results, a loop's parameters) and
// for each local read after it that reaches it along paths from more than
// one predecessor. The elimination then checks every phi against every
// incoming edge, resolving each of the edge's arguments per phi: a block
// of P phis and E incoming edges costs P×P×E. It repeats that over the
// whole function until nothing changes, which takes one more pass per
// level of loops a chain of redundant phis crosses. So the model counts,
// for each merge point M, its phis P(M) and edges E(M), and the work
// (LoopDepth+2) × Σ P(M)²×E(M).
//
// The host's rewrite adds an if (and a call) at the start of a function,
// after every loop header and before every bulk instruction and
// ref.func: each is a merge point the model counts too.
//
// The locals' phis are counted as the builder creates them, in program
// order: a read of a local creates one at every merge point between the
// read and the last place that local was written or read on a path
// dominating the read (where its value is known). A write or read inside
// a block that has since closed does not dominate, so it counts from
// where that block began. A local read inside a loop also gets a phi at
// the loop's header, and the loop's back edges look it up again from the
// loop's end. The model over-counts (a closed block's inside, every
// branch as an edge of its own) and never under-counts what the builder
// does in structured code.
type phiModel struct {
	// Per frame id (a frame instance: an else is a new one).
	parent  []int32
	startMC []int32 // merges made before the frame began
	open    []bool
	// Per merge point.
	preds []int32 // incoming edges
	phis  []int64 // the locals' phis, as differences (prefix sums give them)
	arity []int32 // the phis of the values the edges carry
	// Per local: the frame and merge count of its last write or read,
	// and the merge points that have its phi, as disjoint ranges.
	lastFrame []int32
	lastMC    []int32
	has       [][][2]int32
	// loops are the open loops, innermost last.
	loops []openLoop
	// single is the work of blocks of one predecessor, whose phis are
	// only the values their one edge carries.
	single int64
	// next is the difference the next merge point starts with: where
	// the phis of reads so far end.
	next int64
	// total counts the locals' phis so far; over is set once they alone
	// make the work more than maxWork (see add), which ends validation
	// before the model's own work grows with them.
	total   int64
	maxWork int64
	over    bool
}

// openLoop is an open loop: its frame, its header's merge index, and the
// locals with a phi there.
type openLoop struct {
	frame  int32
	header int32
	locals []int32
}

func (p *phiModel) reset(locals int, maxWork int64) {
	p.parent, p.startMC, p.open = p.parent[:0], p.startMC[:0], p.open[:0]
	p.preds, p.phis, p.arity = p.preds[:0], p.phis[:0], p.arity[:0]
	p.lastFrame = p.lastFrame[:0]
	p.lastMC = p.lastMC[:0]
	for range locals {
		p.lastFrame = append(p.lastFrame, 0)
		p.lastMC = append(p.lastMC, 0)
	}
	for i := range p.has {
		p.has[i] = p.has[i][:0]
	}
	for len(p.has) < locals {
		p.has = append(p.has, nil)
	}
	p.loops = p.loops[:0]
	p.single, p.next, p.total, p.maxWork, p.over = 0, 0, 0, maxWork, false
	p.newFrame(-1) // the function's own, frame 0
	// The rewrite's fuel check and stack charge at the start.
	p.check()
	p.check()
}

// check adds the merge point of one of the rewrite's checks (an if
// that calls yield): one starts a function, one follows every loop
// header, one precedes every bulk instruction and every ref.func.
func (p *phiModel) check() {
	m := p.merge(0)
	p.preds[m] = 2
}

func (p *phiModel) mc() int32 { return int32(len(p.preds)) }

func (p *phiModel) newFrame(parent int32) int32 {
	p.parent = append(p.parent, parent)
	p.startMC = append(p.startMC, p.mc())
	p.open = append(p.open, true)
	return int32(len(p.parent) - 1)
}

// merge adds a merge point of n carried values and returns its index.
func (p *phiModel) merge(n int) int32 {
	p.preds = append(p.preds, 0)
	p.phis = append(p.phis, p.next)
	p.next = 0
	p.arity = append(p.arity, int32(n))
	return p.mc() - 1
}

// enter opens a frame inside frame parent; a loop's header is a merge
// point of its parameters at once (its phis are made before its back
// edges are known).
func (p *phiModel) enter(parent int32, loop bool, params int) int32 {
	id := p.newFrame(parent)
	if loop {
		h := p.merge(params)
		p.preds[h] = 1 // the entry
		p.loops = append(p.loops, openLoop{frame: id, header: h})
		p.startMC[id] = h + 1
	}
	return id
}

// leave closes frame id, reached by branches (to a loop: its back
// edges, which look up its header's locals from its end). What follows
// a block is a merge point of its results when more than one edge
// reaches it: the fall through, its branches, an if's other arm.
func (p *phiModel) leave(id int32, loop bool, branches, results int, twoArms bool) {
	edges := 1
	if loop {
		l := p.loops[len(p.loops)-1]
		p.loops = p.loops[:len(p.loops)-1]
		p.preds[l.header] += int32(branches)
		for _, x := range l.locals {
			p.read(x, id)
		}
	} else {
		edges += branches
	}
	p.open[id] = false
	if twoArms {
		edges++
	}
	if edges == 1 {
		p.single += int64(results) * int64(results)
		return
	}
	m := p.merge(results)
	p.preds[m] = int32(edges)
}

// close closes frame id without a merge point: an if's then arm, which
// its else replaces.
func (p *phiModel) close(id int32) { p.open[id] = false }

// write notes a write of local x in frame f.
func (p *phiModel) write(x int32, f int32) {
	p.lastFrame[x], p.lastMC[x] = f, p.mc()
}

// read notes a read of local x in frame f: a phi at every merge point
// since its value was last known on a dominating path.
func (p *phiModel) read(x int32, f int32) {
	lf, base := p.lastFrame[x], p.lastMC[x]
	for !p.open[lf] {
		base = min(base, p.startMC[lf])
		lf = p.parent[lf]
	}
	if now := p.mc(); base < now {
		p.cover(x, base, now)
		// The loops whose header the range crosses. Once x is known in
		// a loop, no later read of x while it is open reaches back past
		// its header again, so each loop lists x once.
		for i := len(p.loops) - 1; i >= 0 && p.loops[i].header >= base; i-- {
			p.loops[i].locals = append(p.loops[i].locals, x)
		}
	}
	p.lastFrame[x], p.lastMC[x] = f, p.mc()
}

// cover gives local x a phi at merge points [lo, hi) (hi is the merge
// count now) that do not have one yet: the builder finds its value in
// a block where it looked it up before.
func (p *phiModel) cover(x, lo, hi int32) {
	ranges := p.has[x]
	from, end := lo, hi
	for len(ranges) > 0 && ranges[len(ranges)-1][1] >= lo {
		r := ranges[len(ranges)-1]
		ranges = ranges[:len(ranges)-1]
		if r[1] < end {
			p.add(r[1], end)
		}
		end = min(end, r[0])
		from = min(from, r[0])
	}
	if lo < end {
		p.add(lo, end)
	}
	p.has[x] = append(ranges, [2]int32{from, hi})
}

// add adds a phi to merge points [lo, hi). N phis over M merge points
// cost at least N²/M (each point has at least one edge, and the sum of
// squares is least when they are spread evenly), divided by 8 in the
// work (see Code.Work): past maxWork the function is refused anyway.
func (p *phiModel) add(lo, hi int32) {
	p.total += int64(hi - lo)
	if p.total > 1<<31 || p.total*p.total/int64(p.mc())/phiWorkDivisor > p.maxWork {
		p.over = true
	}
	p.phis[lo]++
	if hi == p.mc() {
		p.next--
	} else {
		p.phis[hi]--
	}
}

// work returns the function's estimated work, given its loop depth
// (saturating at maxInt64 / 4: the limits are far below).
func (p *phiModel) work(loopDepth int) int64 {
	var sum float64
	var locals int64
	for m := range p.preds {
		locals += p.phis[m]
		n := float64(locals + int64(p.arity[m]))
		sum += n * n * float64(p.preds[m])
	}
	w := float64(loopDepth+2)*sum + float64(p.single)
	if w > math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return int64(w)
}
