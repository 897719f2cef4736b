package vec

func setAVX(on bool) { hasAVX = on }
