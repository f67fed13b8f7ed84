	.text
	.file	"syrk"
	.globl	kiln_entry_syrk_lanes           # -- Begin function kiln_entry_syrk_lanes
	.p2align	4, 0x90
	.type	kiln_entry_syrk_lanes,@function
kiln_entry_syrk_lanes:                  # @kiln_entry_syrk_lanes
# %bb.0:                                # %entry
	pushq	%r14
	pushq	%rbx
	subq	$72, %rsp
	movq	%rdx, %rsi
	movq	(%rdi), %rax
	movq	8(%rdi), %rdx
	movq	(%rax), %r9
	movq	8(%rax), %rcx
	movq	40(%rax), %r10
	movq	40(%rdx), %r11
	movq	(%rdx), %r14
	movq	16(%rdx), %rbx
	movq	16(%rdi), %rax
	vmovsd	(%rax), %xmm0                   # xmm0 = mem[0],zero
	movq	24(%rdi), %rax
	vmovsd	(%rax), %xmm1                   # xmm1 = mem[0],zero
	cmpq	$2, %rbx
	movl	$1, %eax
	cmovgeq	%rbx, %rax
	cmpq	$32768, %rax                    # imm = 0x8000
	movl	$32768, %edx                    # imm = 0x8000
	cmovlq	%rax, %rdx
	leaq	(%rdx,%rdx,8), %rax
	cmpq	$32754, %rax                    # imm = 0x7FF2
	movl	$32754, %edi                    # imm = 0x7FF2
	cmovbq	%rax, %rdi
	addl	$15, %edi
	movw	$-32768, %ax                    # imm = 0x8000
	xorl	%edx, %edx
	divw	%di
                                        # kill: def $ax killed $ax def $eax
	cmpw	$2, %ax
	movl	$1, %edx
	cmovael	%eax, %edx
	movzwl	%dx, %r8d
	movq	%rsi, 8(%rsp)
	movq	%r14, 16(%rsp)
	movq	%r11, 24(%rsp)
	movq	%rbx, 32(%rsp)
	movq	%r9, 40(%rsp)
	movq	%r10, 48(%rsp)
	vmovsd	%xmm1, 56(%rsp)
	vmovsd	%xmm0, 64(%rsp)
	leaq	syrk.parfor0(%rip), %rdi
	leaq	8(%rsp), %rsi
	xorl	%edx, %edx
	callq	kiln_rt_parfor@PLT
	xorl	%eax, %eax
	addq	$72, %rsp
	popq	%rbx
	popq	%r14
	retq
.Lfunc_end0:
	.size	kiln_entry_syrk_lanes, .Lfunc_end0-kiln_entry_syrk_lanes
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function syrk.parfor0
.LCPI1_0:
	.quad	1                               # 0x1
.LCPI1_3:
	.byte	1                               # 0x1
	.byte	2                               # 0x2
	.byte	3                               # 0x3
	.byte	4                               # 0x4
	.byte	5                               # 0x5
	.byte	6                               # 0x6
	.byte	7                               # 0x7
	.byte	8                               # 0x8
.LCPI1_4:
	.byte	0                               # 0x0
	.byte	1                               # 0x1
	.byte	2                               # 0x2
	.byte	3                               # 0x3
	.byte	4                               # 0x4
	.byte	5                               # 0x5
	.byte	6                               # 0x6
	.byte	7                               # 0x7
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
.LCPI1_1:
	.quad	1                               # 0x1
	.quad	2                               # 0x2
	.quad	3                               # 0x3
	.quad	4                               # 0x4
	.quad	5                               # 0x5
	.quad	6                               # 0x6
	.quad	7                               # 0x7
	.quad	8                               # 0x8
.LCPI1_2:
	.quad	0                               # 0x0
	.quad	1                               # 0x1
	.quad	2                               # 0x2
	.quad	3                               # 0x3
	.quad	4                               # 0x4
	.quad	5                               # 0x5
	.quad	6                               # 0x6
	.quad	7                               # 0x7
	.text
	.p2align	4, 0x90
	.type	syrk.parfor0,@function
syrk.parfor0:                           # @syrk.parfor0
# %bb.0:                                # %entry
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	movabsq	$9223372036854775800, %rax      # imm = 0x7FFFFFFFFFFFFFF8
	movq	8(%rdi), %r11
	movq	16(%rdi), %r8
	movq	24(%rdi), %r9
	movq	32(%rdi), %r10
	movq	40(%rdi), %rcx
	movq	%rcx, -24(%rsp)                 # 8-byte Spill
	vmovupd	48(%rdi), %xmm0
	movq	%rdx, -16(%rsp)                 # 8-byte Spill
	movq	%rdx, %rcx
	subq	%rsi, %rcx
	movq	%rcx, %rdx
	sarq	$63, %rdx
	andnq	%rcx, %rdx, %rdi
	movq	%rdi, %rdx
	andq	%rax, %rdi
	movq	%rsi, -40(%rsp)                 # 8-byte Spill
	addq	%rsi, %rdi
	cmpq	$8, %rcx
	jge	.LBB1_1
.LBB1_6:                                # %i.header29.preheader
	movq	%r10, -32(%rsp)                 # 8-byte Spill
	cmpq	-16(%rsp), %rdi                 # 8-byte Folded Reload
	jge	.LBB1_47
# %bb.7:                                # %i.body30.lr.ph
	movl	%r9d, %ecx
	andl	$7, %ecx
	andq	%r9, %rax
	movq	%r8, %rsi
	imulq	%rdi, %rsi
	leaq	56(%r11,%rsi,8), %rdx
	shlq	$3, %r8
	leaq	56(%r11), %r10
	movq	%r10, -40(%rsp)                 # 8-byte Spill
	leaq	(%r11,%rsi,8), %rbx
	jmp	.LBB1_38
	.p2align	4, 0x90
.LBB1_37:                               # %i.header29.loopexit
                                        #   in Loop: Header=BB1_38 Depth=1
	incq	%rdi
	addq	%r8, %rdx
	addq	%r8, %rbx
	cmpq	-16(%rsp), %rdi                 # 8-byte Folded Reload
	jge	.LBB1_47
.LBB1_38:                               # %i.body30
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB1_40 Depth 2
                                        #       Child Loop BB1_42 Depth 3
                                        #       Child Loop BB1_45 Depth 3
	testq	%rdi, %rdi
	js	.LBB1_37
# %bb.39:                               # %i.header38.preheader.lr.ph
                                        #   in Loop: Header=BB1_38 Depth=1
	movq	%rdi, %rsi
	imulq	-24(%rsp), %rsi                 # 8-byte Folded Reload
	movq	-32(%rsp), %r10                 # 8-byte Reload
	leaq	(%r10,%rsi,8), %r14
	movq	%r11, %r15
	movq	-40(%rsp), %r12                 # 8-byte Reload
	xorl	%r13d, %r13d
	movq	%rdi, %r10
	jmp	.LBB1_40
	.p2align	4, 0x90
.LBB1_46:                               # %i.exit40
                                        #   in Loop: Header=BB1_40 Depth=2
	vmovsd	(%r14,%r13,8), %xmm2            # xmm2 = mem[0],zero
	vpunpcklqdq	%xmm1, %xmm2, %xmm1     # xmm1 = xmm2[0],xmm1[0]
	vmulpd	%xmm1, %xmm0, %xmm1
	vshufpd	$1, %xmm1, %xmm1, %xmm2         # xmm2 = xmm1[1,0]
	vaddsd	%xmm1, %xmm2, %xmm1
	vmovsd	%xmm1, (%r14,%r13,8)
	leaq	1(%r13), %rsi
	addq	%r8, %r12
	addq	%r8, %r15
	movq	%r10, %rdi
	cmpq	%r10, %r13
	movq	%rsi, %r13
	je	.LBB1_37
.LBB1_40:                               # %i.header38.preheader
                                        #   Parent Loop BB1_38 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB1_42 Depth 3
                                        #       Child Loop BB1_45 Depth 3
	vpxor	%xmm1, %xmm1, %xmm1
	testq	%r9, %r9
	jle	.LBB1_46
# %bb.41:                               # %i.body39.lr.ph
                                        #   in Loop: Header=BB1_40 Depth=2
	xorl	%ebp, %ebp
	cmpq	$8, %r9
	jb	.LBB1_43
	.p2align	4, 0x90
.LBB1_42:                               # %i.body39
                                        #   Parent Loop BB1_38 Depth=1
                                        #     Parent Loop BB1_40 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmovsd	-56(%rdx,%rbp,8), %xmm2         # xmm2 = mem[0],zero
	vmovsd	-48(%rdx,%rbp,8), %xmm3         # xmm3 = mem[0],zero
	vmulsd	-56(%r12,%rbp,8), %xmm2, %xmm2
	vaddsd	%xmm2, %xmm1, %xmm1
	vmulsd	-48(%r12,%rbp,8), %xmm3, %xmm2
	vmovsd	-40(%rdx,%rbp,8), %xmm3         # xmm3 = mem[0],zero
	vmulsd	-40(%r12,%rbp,8), %xmm3, %xmm3
	vaddsd	%xmm2, %xmm1, %xmm1
	vaddsd	%xmm3, %xmm1, %xmm1
	vmovsd	-32(%rdx,%rbp,8), %xmm2         # xmm2 = mem[0],zero
	vmulsd	-32(%r12,%rbp,8), %xmm2, %xmm2
	vaddsd	%xmm2, %xmm1, %xmm1
	vmovsd	-24(%rdx,%rbp,8), %xmm2         # xmm2 = mem[0],zero
	vmulsd	-24(%r12,%rbp,8), %xmm2, %xmm2
	vmovsd	-16(%rdx,%rbp,8), %xmm3         # xmm3 = mem[0],zero
	vmulsd	-16(%r12,%rbp,8), %xmm3, %xmm3
	vaddsd	%xmm2, %xmm1, %xmm1
	vaddsd	%xmm3, %xmm1, %xmm1
	vmovsd	-8(%rdx,%rbp,8), %xmm2          # xmm2 = mem[0],zero
	vmulsd	-8(%r12,%rbp,8), %xmm2, %xmm2
	vaddsd	%xmm2, %xmm1, %xmm1
	vmovsd	(%rdx,%rbp,8), %xmm2            # xmm2 = mem[0],zero
	vmulsd	(%r12,%rbp,8), %xmm2, %xmm2
	vaddsd	%xmm2, %xmm1, %xmm1
	addq	$8, %rbp
	cmpq	%rbp, %rax
	jne	.LBB1_42
.LBB1_43:                               # %i.exit40.loopexit.unr-lcssa
                                        #   in Loop: Header=BB1_40 Depth=2
	testq	%rcx, %rcx
	je	.LBB1_46
# %bb.44:                               # %i.body39.epil.preheader
                                        #   in Loop: Header=BB1_40 Depth=2
	leaq	(%r15,%rbp,8), %rsi
	leaq	(%rbx,%rbp,8), %rbp
	xorl	%edi, %edi
	.p2align	4, 0x90
.LBB1_45:                               # %i.body39.epil
                                        #   Parent Loop BB1_38 Depth=1
                                        #     Parent Loop BB1_40 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmovsd	(%rbp,%rdi,8), %xmm2            # xmm2 = mem[0],zero
	vmulsd	(%rsi,%rdi,8), %xmm2, %xmm2
	vaddsd	%xmm2, %xmm1, %xmm1
	incq	%rdi
	cmpq	%rdi, %rcx
	jne	.LBB1_45
	jmp	.LBB1_46
.LBB1_47:                               # %i.exit31
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
	vzeroupper
	retq
.LBB1_1:                                # %i.lanes.body.lr.ph
	shrq	$3, %rdx
	vpbroadcastq	%r8, %zmm1
	movq	-24(%rsp), %rcx                 # 8-byte Reload
	vpbroadcastq	%rcx, %zmm2
	vbroadcastsd	%xmm0, %zmm3
	vbroadcastsd	.LCPI1_0(%rip), %zmm4   # zmm4 = [1,1,1,1,1,1,1,1]
	vpermpd	%zmm0, %zmm4, %zmm4
	cmpq	$1, %rdx
	adcq	$0, %rdx
	movq	%rdx, -8(%rsp)                  # 8-byte Spill
	movl	%r9d, %r14d
	andl	$7, %r14d
	movq	%r9, %r15
	andq	%rax, %r15
	leaq	(,%r8,8), %r12
	xorl	%edx, %edx
	vpmovsxbq	.LCPI1_3(%rip), %zmm5   # zmm5 = [1,2,3,4,5,6,7,8]
	vpmovsxbq	.LCPI1_4(%rip), %zmm6   # zmm6 = [0,1,2,3,4,5,6,7]
	jmp	.LBB1_2
	.p2align	4, 0x90
.LBB1_36:                               # %i.exit
                                        #   in Loop: Header=BB1_2 Depth=1
	movq	-32(%rsp), %rdx                 # 8-byte Reload
	incq	%rdx
	cmpq	-8(%rsp), %rdx                  # 8-byte Folded Reload
	je	.LBB1_6
.LBB1_2:                                # %i.lanes.body
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB1_4 Depth 2
                                        #       Child Loop BB1_15 Depth 3
                                        #       Child Loop BB1_12 Depth 3
	movq	-40(%rsp), %rcx                 # 8-byte Reload
	movq	%rdx, -32(%rsp)                 # 8-byte Spill
	leaq	(%rcx,%rdx,8), %rcx
	vpbroadcastq	%rcx, %zmm8
	vpaddq	%zmm5, %zmm8, %zmm7
	vextracti64x4	$1, %zmm7, %ymm9
	vpmaxsq	%zmm9, %zmm7, %zmm9
	vextracti128	$1, %ymm9, %xmm10
	vpmaxsq	%xmm10, %xmm9, %xmm9
	vpshufd	$238, %xmm9, %xmm10             # xmm10 = xmm9[2,3,2,3]
	vpmaxsq	%xmm10, %xmm9, %xmm9
	vmovq	%xmm9, %rbp
	testq	%rbp, %rbp
	jle	.LBB1_36
# %bb.3:                                # %i.body.lr.ph
                                        #   in Loop: Header=BB1_2 Depth=1
	vpaddq	%zmm6, %zmm8, %zmm9
	vpxor	%xmm8, %xmm8, %xmm8
	vpmullq	%zmm1, %zmm9, %zmm8
	vpmullq	%zmm2, %zmm9, %zmm9
	movq	%r11, %rcx
	xorl	%ebx, %ebx
	jmp	.LBB1_4
	.p2align	4, 0x90
.LBB1_5:                                #   in Loop: Header=BB1_4 Depth=2
	vxorpd	%xmm11, %xmm11, %xmm11
.LBB1_35:                               # %i.exit6
                                        #   in Loop: Header=BB1_4 Depth=2
	vpaddq	%zmm9, %zmm10, %zmm10
	kmovq	%k1, %k2
	vxorpd	%xmm12, %xmm12, %xmm12
	vgatherqpd	(%r10,%zmm10,8), %zmm12 {%k2}
	vmulpd	%zmm11, %zmm4, %zmm11
	vmulpd	%zmm12, %zmm3, %zmm12
	vaddpd	%zmm12, %zmm11, %zmm11
	vscatterqpd	%zmm11, (%r10,%zmm10,8) {%k1}
	incq	%rbx
	addq	%r12, %rcx
	cmpq	%rbp, %rbx
	je	.LBB1_36
.LBB1_4:                                # %i.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB1_15 Depth 3
                                        #       Child Loop BB1_12 Depth 3
	vpbroadcastq	%rbx, %zmm10
	vpcmpgtq	%zmm10, %zmm7, %k1
	testq	%r9, %r9
	jle	.LBB1_5
# %bb.8:                                # %i.body5.lr.ph
                                        #   in Loop: Header=BB1_4 Depth=2
	kmovd	%k1, %edx
	vxorpd	%xmm11, %xmm11, %xmm11
	cmpq	$8, %r9
	jae	.LBB1_14
# %bb.9:                                #   in Loop: Header=BB1_4 Depth=2
	xorl	%r13d, %r13d
	testq	%r14, %r14
	jne	.LBB1_11
	jmp	.LBB1_35
	.p2align	4, 0x90
.LBB1_14:                               # %i.body5.preheader
                                        #   in Loop: Header=BB1_4 Depth=2
	xorl	%esi, %esi
	jmp	.LBB1_15
	.p2align	4, 0x90
.LBB1_31:                               # %lanes.loaded.7
                                        #   in Loop: Header=BB1_15 Depth=3
	vpbroadcastq	%r13, %zmm20
	vpaddq	%zmm8, %zmm20, %zmm20
	kmovq	%k1, %k2
	vxorpd	%xmm21, %xmm21, %xmm21
	vgatherqpd	(%r11,%zmm20,8), %zmm21 {%k2}
	leaq	1(%r13), %rsi
	vpbroadcastq	%rsi, %zmm20
	vpaddq	%zmm8, %zmm20, %zmm20
	kmovq	%k1, %k2
	vxorpd	%xmm22, %xmm22, %xmm22
	vgatherqpd	(%r11,%zmm20,8), %zmm22 {%k2}
	incq	%rsi
	vpbroadcastq	%rsi, %zmm20
	vpaddq	%zmm8, %zmm20, %zmm20
	kmovq	%k1, %k2
	vxorpd	%xmm23, %xmm23, %xmm23
	vgatherqpd	(%r11,%zmm20,8), %zmm23 {%k2}
	incq	%rsi
	vpbroadcastq	%rsi, %zmm20
	vpaddq	%zmm8, %zmm20, %zmm20
	kmovq	%k1, %k2
	vxorpd	%xmm24, %xmm24, %xmm24
	vgatherqpd	(%r11,%zmm20,8), %zmm24 {%k2}
	incq	%rsi
	vpbroadcastq	%rsi, %zmm20
	vpaddq	%zmm8, %zmm20, %zmm20
	kmovq	%k1, %k2
	vxorpd	%xmm25, %xmm25, %xmm25
	vgatherqpd	(%r11,%zmm20,8), %zmm25 {%k2}
	vbroadcastsd	%xmm13, %zmm13
	vmulpd	%zmm13, %zmm21, %zmm13
	vbroadcastsd	%xmm12, %zmm12
	vmulpd	%zmm12, %zmm22, %zmm12
	vaddpd	%zmm13, %zmm11, %zmm13
	vaddpd	%zmm12, %zmm13, %zmm12
	vbroadcastsd	%xmm17, %zmm13
	vmulpd	%zmm13, %zmm23, %zmm13
	vaddpd	%zmm13, %zmm12, %zmm12
	vbroadcastsd	%xmm16, %zmm13
	vmulpd	%zmm13, %zmm24, %zmm13
	incq	%rsi
	vpbroadcastq	%rsi, %zmm16
	vpaddq	%zmm8, %zmm16, %zmm16
	kmovq	%k1, %k2
	vxorpd	%xmm17, %xmm17, %xmm17
	vgatherqpd	(%r11,%zmm16,8), %zmm17 {%k2}
	vaddpd	%zmm13, %zmm12, %zmm12
	vbroadcastsd	%xmm18, %zmm13
	vmulpd	%zmm13, %zmm25, %zmm13
	vaddpd	%zmm13, %zmm12, %zmm12
	incq	%rsi
	vpbroadcastq	%rsi, %zmm13
	vpaddq	%zmm8, %zmm13, %zmm13
	kmovq	%k1, %k2
	vxorpd	%xmm16, %xmm16, %xmm16
	vgatherqpd	(%r11,%zmm13,8), %zmm16 {%k2}
	vbroadcastsd	%xmm14, %zmm13
	vmulpd	%zmm13, %zmm17, %zmm13
	vaddpd	%zmm13, %zmm12, %zmm12
	incq	%rsi
	vbroadcastsd	%xmm19, %zmm13
	vpbroadcastq	%rsi, %zmm14
	vpaddq	%zmm8, %zmm14, %zmm14
	kmovq	%k1, %k2
	vxorpd	%xmm17, %xmm17, %xmm17
	vgatherqpd	(%r11,%zmm14,8), %zmm17 {%k2}
	vmulpd	%zmm13, %zmm16, %zmm13
	vaddpd	%zmm13, %zmm12, %zmm12
	vbroadcastsd	%xmm15, %zmm13
	vmulpd	%zmm13, %zmm17, %zmm13
	vaddpd	%zmm13, %zmm12, %zmm11 {%k1}
	incq	%rsi
	cmpq	%r15, %rsi
	je	.LBB1_32
.LBB1_15:                               # %i.body5
                                        #   Parent Loop BB1_2 Depth=1
                                        #     Parent Loop BB1_4 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	movq	%rsi, %r13
	vxorpd	%xmm12, %xmm12, %xmm12
	vxorpd	%xmm13, %xmm13, %xmm13
	testb	%dl, %dl
	je	.LBB1_17
# %bb.16:                               # %lanes.load
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	(%rcx,%r13,8), %xmm13           # xmm13 = mem[0],zero
.LBB1_17:                               # %lanes.loaded
                                        #   in Loop: Header=BB1_15 Depth=3
	testb	%dl, %dl
	je	.LBB1_19
# %bb.18:                               # %lanes.load.1
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	8(%rcx,%r13,8), %xmm12          # xmm12 = mem[0],zero
.LBB1_19:                               # %lanes.loaded.1
                                        #   in Loop: Header=BB1_15 Depth=3
	vxorpd	%xmm16, %xmm16, %xmm16
	vxorpd	%xmm17, %xmm17, %xmm17
	testb	%dl, %dl
	je	.LBB1_21
# %bb.20:                               # %lanes.load.2
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	16(%rcx,%r13,8), %xmm17         # xmm17 = mem[0],zero
.LBB1_21:                               # %lanes.loaded.2
                                        #   in Loop: Header=BB1_15 Depth=3
	testb	%dl, %dl
	je	.LBB1_23
# %bb.22:                               # %lanes.load.3
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	24(%rcx,%r13,8), %xmm16         # xmm16 = mem[0],zero
.LBB1_23:                               # %lanes.loaded.3
                                        #   in Loop: Header=BB1_15 Depth=3
	vxorpd	%xmm14, %xmm14, %xmm14
	vxorpd	%xmm18, %xmm18, %xmm18
	testb	%dl, %dl
	je	.LBB1_25
# %bb.24:                               # %lanes.load.4
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	32(%rcx,%r13,8), %xmm18         # xmm18 = mem[0],zero
.LBB1_25:                               # %lanes.loaded.4
                                        #   in Loop: Header=BB1_15 Depth=3
	testb	%dl, %dl
	je	.LBB1_27
# %bb.26:                               # %lanes.load.5
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	40(%rcx,%r13,8), %xmm14         # xmm14 = mem[0],zero
.LBB1_27:                               # %lanes.loaded.5
                                        #   in Loop: Header=BB1_15 Depth=3
	vxorpd	%xmm15, %xmm15, %xmm15
	vxorpd	%xmm19, %xmm19, %xmm19
	testb	%dl, %dl
	je	.LBB1_29
# %bb.28:                               # %lanes.load.6
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	48(%rcx,%r13,8), %xmm19         # xmm19 = mem[0],zero
.LBB1_29:                               # %lanes.loaded.6
                                        #   in Loop: Header=BB1_15 Depth=3
	testb	%dl, %dl
	je	.LBB1_31
# %bb.30:                               # %lanes.load.7
                                        #   in Loop: Header=BB1_15 Depth=3
	vmovsd	56(%rcx,%r13,8), %xmm15         # xmm15 = mem[0],zero
	jmp	.LBB1_31
	.p2align	4, 0x90
.LBB1_32:                               #   in Loop: Header=BB1_4 Depth=2
	addq	$8, %r13
	testq	%r14, %r14
	je	.LBB1_35
.LBB1_11:                               # %i.body5.epil.preheader
                                        #   in Loop: Header=BB1_4 Depth=2
	movq	%r14, %rsi
	jmp	.LBB1_12
	.p2align	4, 0x90
.LBB1_33:                               # %lanes.load.epil
                                        #   in Loop: Header=BB1_12 Depth=3
	vmovsd	(%rcx,%r13,8), %xmm12           # xmm12 = mem[0],zero
.LBB1_34:                               # %lanes.loaded.epil
                                        #   in Loop: Header=BB1_12 Depth=3
	vpbroadcastq	%r13, %zmm13
	vpaddq	%zmm8, %zmm13, %zmm13
	kmovq	%k1, %k2
	vxorpd	%xmm14, %xmm14, %xmm14
	vgatherqpd	(%r11,%zmm13,8), %zmm14 {%k2}
	vbroadcastsd	%xmm12, %zmm12
	vmulpd	%zmm12, %zmm14, %zmm12
	vaddpd	%zmm12, %zmm11, %zmm11 {%k1}
	incq	%r13
	decq	%rsi
	je	.LBB1_35
.LBB1_12:                               # %i.body5.epil
                                        #   Parent Loop BB1_2 Depth=1
                                        #     Parent Loop BB1_4 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	testb	%dl, %dl
	jne	.LBB1_33
# %bb.13:                               #   in Loop: Header=BB1_12 Depth=3
	vxorpd	%xmm12, %xmm12, %xmm12
	jmp	.LBB1_34
.Lfunc_end1:
	.size	syrk.parfor0, .Lfunc_end1-syrk.parfor0
                                        # -- End function
	.section	".note.GNU-stack","",@progbits
