#include "textflag.h"

// func max2x2s(n int, r0, r1 *float32, y *float32, arg *int, base, w int)
//
// For n (a multiple of 4) 2×2 stride-2 windows whose top row starts at r0
// and bottom row at r1 (w elements later), writes each window's maximum to
// y and its flat index to arg: base + 2·k + {0, 1, w, w+1} for window k.
// The four cells are compared in MaxPool2x2's order (top-left, top-right,
// bottom-left, bottom-right) with a strict ordered greater-than, so the
// first of equal maxima wins and NaN never replaces: the same as the Go
// loop, eight windows at a time and a last four in 128-bit registers.
TEXT ·max2x2s(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ y+24(FP), DI
	MOVQ arg+32(FP), R8
	MOVQ base+40(FP), R9
	MOVQ w+48(FP), R10

	// Y12: offset of the top-right cell (1) in every lane, Y13 the
	// bottom-left (w), Y14 the bottom-right (w+1), as int32.
	MOVL         $1, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	VMOVD        R10, X13
	VPBROADCASTD X13, Y13
	VPADDD       Y12, Y13, Y14
	// Y15: 2·k for lanes k = 0..7, the windows' column offsets.
	MOVQ         $0x0000000200000000, AX
	VMOVQ        AX, X15
	MOVQ         $0x0000000600000004, AX
	VMOVQ        AX, X11
	VPUNPCKLQDQ  X11, X15, X15
	VPBROADCASTD X12, X11
	VPSLLD       $3, X11, X11       // 8 in each lane
	VPADDD       X11, X15, X11      // 8, 10, 12, 14
	VINSERTI128  $1, X11, Y15, Y15
	// Y10: base as int64 in each lane.
	VMOVQ        R9, X10
	VPBROADCASTQ X10, Y10
	MOVQ         $16, R11           // 2·8: the next group's column offset
	VMOVD        R11, X9
	VPBROADCASTD X9, Y9

	CMPQ CX, $8
	JLT  four

group:
	VMOVUPS (SI), Y0      // top row, cells 0-7
	VMOVUPS 32(SI), Y1    // cells 8-15
	VMOVUPS (DX), Y2      // bottom row
	VMOVUPS 32(DX), Y3
	// even cells (left column of each window) and odd (right), in window order
	VSHUFPS $0x88, Y1, Y0, Y4
	VSHUFPS $0xDD, Y1, Y0, Y5
	VSHUFPS $0x88, Y3, Y2, Y6
	VSHUFPS $0xDD, Y3, Y2, Y7
	VPERMPD $0xD8, Y4, Y4 // top-left
	VPERMPD $0xD8, Y5, Y5 // top-right
	VPERMPD $0xD8, Y6, Y6 // bottom-left
	VPERMPD $0xD8, Y7, Y7 // bottom-right

	VXORPS    Y8, Y8, Y8         // offsets: 0 (top-left)
	VCMPPS    $0x1E, Y4, Y5, Y11 // top-right > best (GT_OQ)
	VBLENDVPS Y11, Y5, Y4, Y4
	VBLENDVPS Y11, Y12, Y8, Y8
	VCMPPS    $0x1E, Y4, Y6, Y11
	VBLENDVPS Y11, Y6, Y4, Y4
	VBLENDVPS Y11, Y13, Y8, Y8
	VCMPPS    $0x1E, Y4, Y7, Y11
	VBLENDVPS Y11, Y7, Y4, Y4
	VBLENDVPS Y11, Y14, Y8, Y8
	VMOVUPS   Y4, (DI)

	VPADDD       Y15, Y8, Y8    // + 2·k and the group's columns
	VPMOVSXDQ    X8, Y0
	VEXTRACTI128 $1, Y8, X1
	VPMOVSXDQ    X1, Y1
	VPADDQ       Y10, Y0, Y0
	VPADDQ       Y10, Y1, Y1
	VMOVDQU      Y0, (R8)
	VMOVDQU      Y1, 32(R8)

	VPADDD Y9, Y15, Y15 // the next 8 windows are 16 cells on
	ADDQ   $64, SI
	ADDQ   $64, DX
	ADDQ   $32, DI
	ADDQ   $64, R8
	SUBQ   $8, CX
	CMPQ   CX, $8
	JGE    group

four:
	// The last four windows when n mod 8 is 4: in-lane shuffles of 128-bit
	// rows already leave the cells in window order; lanes 0-3 of the
	// offset registers serve as they are.
	TESTQ     CX, CX
	JEQ       done
	VMOVUPS   (SI), X0
	VMOVUPS   16(SI), X1
	VMOVUPS   (DX), X2
	VMOVUPS   16(DX), X3
	VSHUFPS   $0x88, X1, X0, X4
	VSHUFPS   $0xDD, X1, X0, X5
	VSHUFPS   $0x88, X3, X2, X6
	VSHUFPS   $0xDD, X3, X2, X7
	VXORPS    X8, X8, X8
	VCMPPS    $0x1E, X4, X5, X11
	VBLENDVPS X11, X5, X4, X4
	VBLENDVPS X11, X12, X8, X8
	VCMPPS    $0x1E, X4, X6, X11
	VBLENDVPS X11, X6, X4, X4
	VBLENDVPS X11, X13, X8, X8
	VCMPPS    $0x1E, X4, X7, X11
	VBLENDVPS X11, X7, X4, X4
	VBLENDVPS X11, X14, X8, X8
	VMOVUPS   X4, (DI)
	VPADDD    X15, X8, X8
	VPMOVSXDQ X8, Y0
	VPADDQ    Y10, Y0, Y0
	VMOVDQU   Y0, (R8)

done:
	VZEROUPPER
	RET
