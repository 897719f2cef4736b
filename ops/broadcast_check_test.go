package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// broadcastsTo agrees with BroadcastShapes: true exactly for the shape it
// builds, false for any other and for shapes that do not broadcast.
func TestBroadcastsToAgreesWithBroadcastShapes(t *testing.T) {
	shapes := []tensor.Shape{{}, {1}, {3}, {4}, {2, 1}, {2, 3}, {1, 3}, {4, 1, 3}, {4, 2, 1}, {5, 4, 2, 3}, {0}, {2, 0}}
	for _, a := range shapes {
		for _, b := range shapes {
			want, err := BroadcastShapes(a, b)
			for _, out := range shapes {
				require.Equal(t, err == nil && want.Equal(out), broadcastsTo(out, a, b), "%v and %v to %v", a, b, out)
			}
			if err == nil {
				require.True(t, broadcastsTo(want, a, b), "%v and %v to %v", a, b, want)
			}
		}
	}
}
