package plugin

// bitMask is the part of kube's TopologyManager bitmask (pkg/kubelet/cm/topologymanager/bitmask,
// v1.37.2) the plugin uses: one bit per NUMA node, 0..63.
type bitMask uint64

func newEmptyBitMask() *bitMask {
	s := bitMask(0)
	return &s
}

// Add sets the bits; a bit out of 0..63 leaves the mask unchanged (kube returns an error, which
// the plugin ignores).
func (s *bitMask) Add(bits ...int) {
	mask := *s
	for _, i := range bits {
		if i < 0 || i >= 64 {
			return
		}
		mask |= 1 << uint64(i)
	}
	*s = mask
}

func (s *bitMask) And(masks ...*bitMask) {
	for _, m := range masks {
		*s &= *m
	}
}

func (s *bitMask) Fill() { *s = bitMask(^uint64(0)) }

func (s *bitMask) IsEmpty() bool { return *s == 0 }

func (s *bitMask) GetBits() []int {
	var bits []int
	for i := uint64(0); i < 64; i++ {
		if (*s & (1 << i)) > 0 {
			bits = append(bits, int(i))
		}
	}
	return bits
}
