package vec

func setAVX(on bool) { hasAVX = on }

// setMax2x2AVX2 turns MaxPool2x2's AVX2 kernel on or off and returns the
// previous setting.
func setMax2x2AVX2(on bool) (old bool) {
	old, hasMax2x2AVX2 = hasMax2x2AVX2, on
	return old
}
