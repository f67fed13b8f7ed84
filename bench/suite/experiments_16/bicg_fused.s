	.text
	.file	"bicg"
	.section	.rodata.cst32,"aM",@progbits,32
	.p2align	5, 0x0                          # -- Begin function kiln_entry_bicg_fused
.LCPI0_0:
	.quad	0                               # 0x0
	.quad	1                               # 0x1
	.quad	6                               # 0x6
	.quad	1                               # 0x1
	.section	.rodata.cst4,"aM",@progbits,4
.LCPI0_1:
	.byte	0                               # 0x0
	.byte	1                               # 0x1
	.byte	6                               # 0x6
	.byte	1                               # 0x1
	.text
	.globl	kiln_entry_bicg_fused
	.p2align	4, 0x90
	.type	kiln_entry_bicg_fused,@function
kiln_entry_bicg_fused:                  # @kiln_entry_bicg_fused
# %bb.0:                                # %entry
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	subq	$248, %rsp
	movq	%rdx, %rbp
	movq	(%rdi), %rax
	movq	8(%rdi), %rcx
	movq	8(%rax), %rbx
	vmovdqu	8(%rax), %xmm0
	movq	8(%rcx), %rdx
	cmpq	%rbx, %rdx
	jne	.LBB0_1
# %bb.5:                                # %check.ok
	movq	%rsi, %r14
	movq	16(%rdi), %rsi
	movq	8(%rsi), %rdx
	vpextrq	$1, %xmm0, %r12
	cmpq	%rdx, %r12
	jne	.LBB0_6
# %bb.7:                                # %check.ok7
	movq	(%rax), %rdx
	movq	%rdx, 8(%rsp)                   # 8-byte Spill
	movq	40(%rax), %rax
	movq	%rax, 16(%rsp)                  # 8-byte Spill
	movq	(%rcx), %r13
	movq	(%rsi), %rax
	movq	%rax, 104(%rsp)                 # 8-byte Spill
	movq	%r12, 136(%rsp)
	leaq	.Lalloc.name.2(%rip), %r8
	leaq	136(%rsp), %rsi
	movl	$8, %ecx
	movq	%rbp, %rdi
	movl	$1, %edx
	vzeroupper
	callq	kiln_rt_alloc@PLT
	testq	%rax, %rax
	je	.LBB0_8
# %bb.9:                                # %ok
	movq	%rax, %r15
	movq	%rbx, 136(%rsp)
	leaq	.Lalloc.name.2(%rip), %r8
	leaq	136(%rsp), %rsi
	movl	$8, %ecx
	movq	%rbp, %rdi
	movl	$1, %edx
	callq	kiln_rt_alloc@PLT
	testq	%rax, %rax
	je	.LBB0_10
# %bb.11:                               # %ok11
	movq	%r13, 96(%rsp)                  # 8-byte Spill
	movq	%r14, 128(%rsp)                 # 8-byte Spill
	cmpq	$31745, %r12                    # imm = 0x7C01
	movq	%rax, 112(%rsp)                 # 8-byte Spill
	jl	.LBB0_15
# %bb.12:                               # %if.then
	leaq	1023(%r12), %rcx
	leaq	2046(%r12), %r14
	testq	%rcx, %rcx
	cmovnsq	%rcx, %r14
	sarq	$10, %r14
	movq	%rbp, 24(%rsp)
	movq	8(%rsp), %rcx                   # 8-byte Reload
	movq	%rcx, 32(%rsp)
	movq	16(%rsp), %rcx                  # 8-byte Reload
	movq	%rcx, 40(%rsp)
	movq	%r12, 48(%rsp)
	movq	104(%rsp), %rcx                 # 8-byte Reload
	movq	%rcx, 56(%rsp)
	movq	%rax, 64(%rsp)
	leaq	bicg.parfor0(%rip), %rdi
	leaq	24(%rsp), %rsi
	movl	$1, %r13d
	movl	$1, %r8d
	xorl	%edx, %edx
	movq	%rbx, %rcx
	callq	kiln_rt_parfor@PLT
	cmpq	$2, %rbx
	cmovgeq	%rbx, %r13
	cmpq	$32768, %r13                    # imm = 0x8000
	movl	$32768, %eax                    # imm = 0x8000
	cmovlq	%r13, %rax
	leaq	(%rax,%rax,4), %rcx
	leaq	(%rax,%rcx,2), %rax
	cmpq	$32756, %rax                    # imm = 0x7FF4
	movl	$32756, %ecx                    # imm = 0x7FF4
	cmovbq	%rax, %rcx
	addl	$13, %ecx
	movw	$-32768, %ax                    # imm = 0x8000
	xorl	%edx, %edx
	divw	%cx
                                        # kill: def $ax killed $ax def $eax
	cmpw	$2, %ax
	movl	$1, %ecx
	cmovael	%eax, %ecx
	movzwl	%cx, %r8d
	movq	%rbp, 24(%rsp)
	movq	8(%rsp), %rax                   # 8-byte Reload
	movq	%rax, 32(%rsp)
	movq	16(%rsp), %rax                  # 8-byte Reload
	movq	%rax, 40(%rsp)
	movq	%r12, 48(%rsp)
	movq	%r15, 56(%rsp)
	movq	96(%rsp), %rax                  # 8-byte Reload
	movq	%rax, 64(%rsp)
	movq	%rbx, 72(%rsp)
	leaq	bicg.parfor1(%rip), %rdi
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%r14, %rcx
	callq	kiln_rt_parfor@PLT
	jmp	.LBB0_13
.LBB0_15:                               # %if.else
	movq	%rbp, 24(%rsp)
	movq	%r15, 32(%rsp)
	leaq	bicg.parfor2(%rip), %rdi
	leaq	24(%rsp), %rsi
	movl	$10922, %r8d                    # imm = 0x2AAA
	xorl	%edx, %edx
	movq	%r12, %rcx
	callq	kiln_rt_parfor@PLT
	cmpq	$2, %r12
	movl	$1, %eax
	cmovgeq	%r12, %rax
	addq	%rax, %rax
	leaq	(%rax,%rax,8), %rax
	cmpq	$32768, %rax                    # imm = 0x8000
	movl	$32768, %ecx                    # imm = 0x8000
	cmovaeq	%rcx, %rax
	incq	%rax
	cmpq	$32766, %rax                    # imm = 0x7FFE
	movl	$32766, %ecx                    # imm = 0x7FFE
	cmovbq	%rax, %rcx
	addl	$3, %ecx
	movw	$-32768, %ax                    # imm = 0x8000
	xorl	%edx, %edx
	divw	%cx
                                        # kill: def $ax killed $ax def $eax
	cmpw	$2, %ax
	movl	$1, %ecx
	cmovael	%eax, %ecx
	movzwl	%cx, %edx
	xorl	%edi, %edi
	movq	%rbx, %rsi
	callq	kiln_rt_parfor_width@PLT
	movq	%rax, %r13
	leaq	.Ldot.identity(%rip), %rcx
	movl	$8, %edx
	movq	%rax, %rdi
	movq	%r12, %rsi
	callq	kiln_rt_private_copies@PLT
	movq	%rax, %r14
	movq	%rbx, 120(%rsp)                 # 8-byte Spill
	movq	%rbp, %rbx
	leaq	63(,%r12,8), %rbp
	andq	$-64, %rbp
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
	testq	%r14, %r14
	movq	%r15, %rax
	cmovneq	%r14, %rax
	movq	%rbp, %rcx
	cmoveq	%r14, %rcx
	leaq	bicg.parfor4.atomic(%rip), %rdi
	leaq	bicg.parfor3(%rip), %rdx
	cmovneq	%rdx, %rdi
	cmpq	$2, %r13
	cmovlq	%rdx, %rdi
	movq	%rbx, 24(%rsp)
	movq	120(%rsp), %rbx                 # 8-byte Reload
	movq	8(%rsp), %rdx                   # 8-byte Reload
	movq	%rdx, 32(%rsp)
	movq	16(%rsp), %rdx                  # 8-byte Reload
	movq	%rdx, 40(%rsp)
	movq	%r12, 48(%rsp)
	movq	104(%rsp), %rdx                 # 8-byte Reload
	movq	%rdx, 56(%rsp)
	movq	%rcx, 64(%rsp)
	movq	%rax, 72(%rsp)
	movq	96(%rsp), %rax                  # 8-byte Reload
	movq	%rax, 80(%rsp)
	movq	112(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 88(%rsp)
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%rbx, %rcx
	movq	%r13, %r8
	callq	kiln_rt_parfor_pieces@PLT
	testq	%r14, %r14
	je	.LBB0_13
# %bb.16:                               # %copies.combine
	movq	%r15, 24(%rsp)
	movq	%r14, 32(%rsp)
	movq	%rbp, 40(%rsp)
	movq	%r13, 48(%rsp)
	movq	%r12, 56(%rsp)
	cmpq	$32768, %r13                    # imm = 0x8000
	movl	$32768, %ecx                    # imm = 0x8000
	cmovlq	%r13, %rcx
	movq	%rcx, %rax
	shrq	$32, %rax
	je	.LBB0_17
# %bb.18:
	movl	$32768, %eax                    # imm = 0x8000
	xorl	%edx, %edx
	idivq	%rcx
	jmp	.LBB0_19
.LBB0_17:
	movl	$32768, %eax                    # imm = 0x8000
	xorl	%edx, %edx
	divl	%ecx
                                        # kill: def $eax killed $eax def $rax
.LBB0_19:
	cmpq	$2, %rax
	movl	$1, %r8d
	cmovgeq	%rax, %r8
	leaq	bicg.combine5(%rip), %rdi
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%r12, %rcx
	callq	kiln_rt_parfor@PLT
	movq	%r14, %rdi
	callq	kiln_rt_free@PLT
.LBB0_13:                               # %if.end
	movq	128(%rsp), %r14                 # 8-byte Reload
	movq	(%r14), %rax
	movq	%r15, (%rax)
	movq	%r12, 8(%rax)
	movq	$1, 40(%rax)
	vpxor	%xmm0, %xmm0, %xmm0
	vmovdqu	%xmm0, 16(%rax)
	movq	$0, 32(%rax)
	vmovdqu	%xmm0, 48(%rax)
	movq	$0, 64(%rax)
	movq	%r15, %rdi
	callq	kiln_rt_release@PLT
	movq	8(%r14), %rax
	movq	112(%rsp), %rdi                 # 8-byte Reload
	movq	%rdi, (%rax)
	movq	%rbx, 8(%rax)
	movq	$1, 40(%rax)
	vpxor	%xmm0, %xmm0, %xmm0
	vmovdqu	%xmm0, 16(%rax)
	movq	$0, 32(%rax)
	vmovdqu	%xmm0, 48(%rax)
	movq	$0, 64(%rax)
	callq	kiln_rt_release@PLT
	xorl	%ebx, %ebx
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
.LBB0_14:                               # %common.ret
	movl	%ebx, %eax
	addq	$248, %rsp
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
	retq
.LBB0_1:                                # %check.failed
	movq	%rdx, 168(%rsp)
	vmovdqu	%xmm0, 176(%rsp)
	movq	%rdx, 192(%rsp)
	movq	%rbx, 200(%rsp)
	leaq	.Lcheck.message(%rip), %rdx
	leaq	168(%rsp), %rcx
	jmp	.LBB0_2
.LBB0_6:                                # %check.failed6
	vpbroadcastq	%rdx, %ymm1
	vpmovsxbq	.LCPI0_1(%rip), %ymm2   # ymm2 = [0,1,6,1]
	vpermi2q	%ymm1, %ymm0, %ymm2
	vmovdqu	%ymm2, 208(%rsp)
	movq	%rdx, 240(%rsp)
	leaq	.Lcheck.message.1(%rip), %rdx
	leaq	208(%rsp), %rcx
.LBB0_2:                                # %fail
	movq	%rbp, %rbx
	movq	%rbp, %rdi
	movl	$2, %esi
	movl	$5, %r8d
	vzeroupper
	callq	kiln_rt_fail@PLT
	jmp	.LBB0_3
.LBB0_8:
	movq	%rbp, %rbx
.LBB0_3:                                # %fail
	xorl	%edi, %edi
	jmp	.LBB0_4
.LBB0_10:
	movq	%r15, %rdi
	movq	%rbp, %rbx
.LBB0_4:                                # %fail
	callq	kiln_rt_free@PLT
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
	movl	(%rbx), %ebx
	jmp	.LBB0_14
.Lfunc_end0:
	.size	kiln_entry_bicg_fused, .Lfunc_end0-kiln_entry_bicg_fused
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function bicg.parfor0
.LCPI1_0:
	.quad	0x8000000000000000              # double -0
	.section	.rodata.cst32,"aM",@progbits,32
	.p2align	5, 0x0
.LCPI1_1:
	.zero	8
	.quad	0x8000000000000000              # double -0
	.quad	0x8000000000000000              # double -0
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	bicg.parfor0,@function
bicg.parfor0:                           # @bicg.parfor0
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB1_17
# %bb.1:                                # %j.header.preheader.lr.ph
	pushq	%r15
	pushq	%r14
	pushq	%rbx
	movq	8(%rdi), %rbx
	movq	16(%rdi), %rax
	movq	24(%rdi), %rcx
	movq	32(%rdi), %r8
	movq	40(%rdi), %rdi
	movabsq	$9223372036854775776, %r9       # imm = 0x7FFFFFFFFFFFFFE0
	movq	%rcx, %r10
	andq	%r9, %r10
	orq	$28, %r9
	andq	%rcx, %r9
	movq	%rax, %r14
	imulq	%rsi, %r14
	leaq	192(%rbx,%r14,8), %r11
	shlq	$3, %rax
	leaq	(%rbx,%r14,8), %rbx
	vmovsd	.LCPI1_0(%rip), %xmm0           # xmm0 = [-0.0E+0,0.0E+0]
	vbroadcastsd	.LCPI1_0(%rip), %ymm1   # ymm1 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	vbroadcastsd	.LCPI1_0(%rip), %zmm2   # zmm2 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	jmp	.LBB1_2
	.p2align	4, 0x90
.LBB1_15:                               # %j.exit
                                        #   in Loop: Header=BB1_2 Depth=1
	vmovsd	%xmm3, (%rdi,%rsi,8)
	incq	%rsi
	addq	%rax, %r11
	addq	%rax, %rbx
	cmpq	%rdx, %rsi
	je	.LBB1_16
.LBB1_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB1_8 Depth 2
                                        #     Child Loop BB1_12 Depth 2
                                        #     Child Loop BB1_14 Depth 2
	vmovapd	%xmm0, %xmm3
	testq	%rcx, %rcx
	jle	.LBB1_15
# %bb.3:                                # %iter.check
                                        #   in Loop: Header=BB1_2 Depth=1
	cmpq	$4, %rcx
	jae	.LBB1_5
# %bb.4:                                #   in Loop: Header=BB1_2 Depth=1
	xorl	%r14d, %r14d
	vmovapd	%xmm0, %xmm3
	jmp	.LBB1_14
	.p2align	4, 0x90
.LBB1_5:                                # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB1_2 Depth=1
	cmpq	$32, %rcx
	jae	.LBB1_7
# %bb.6:                                #   in Loop: Header=BB1_2 Depth=1
	vmovapd	%xmm0, %xmm3
	xorl	%r15d, %r15d
	jmp	.LBB1_11
.LBB1_7:                                # %vector.body.preheader
                                        #   in Loop: Header=BB1_2 Depth=1
	xorl	%r14d, %r14d
	vmovapd	%zmm2, %zmm3
	vmovapd	%zmm2, %zmm4
	vmovapd	%zmm2, %zmm5
	vmovapd	%zmm2, %zmm6
	.p2align	4, 0x90
.LBB1_8:                                # %vector.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	-192(%r11,%r14,8), %zmm7
	vmovupd	-128(%r11,%r14,8), %zmm8
	vmovupd	-64(%r11,%r14,8), %zmm9
	vmovupd	(%r11,%r14,8), %zmm10
	vmulpd	(%r8,%r14,8), %zmm7, %zmm7
	vaddpd	%zmm7, %zmm3, %zmm3
	vmulpd	64(%r8,%r14,8), %zmm8, %zmm7
	vaddpd	%zmm7, %zmm4, %zmm4
	vmulpd	128(%r8,%r14,8), %zmm9, %zmm7
	vaddpd	%zmm7, %zmm5, %zmm5
	vmulpd	192(%r8,%r14,8), %zmm10, %zmm7
	vaddpd	%zmm7, %zmm6, %zmm6
	addq	$32, %r14
	cmpq	%r14, %r10
	jne	.LBB1_8
# %bb.9:                                # %middle.block
                                        #   in Loop: Header=BB1_2 Depth=1
	vaddpd	%zmm3, %zmm4, %zmm3
	vaddpd	%zmm3, %zmm5, %zmm3
	vaddpd	%zmm3, %zmm6, %zmm3
	vextractf64x4	$1, %zmm3, %ymm4
	vaddpd	%zmm4, %zmm3, %zmm3
	vextractf128	$1, %ymm3, %xmm4
	vaddpd	%xmm4, %xmm3, %xmm3
	vshufpd	$1, %xmm3, %xmm3, %xmm4         # xmm4 = xmm3[1,0]
	vaddsd	%xmm4, %xmm3, %xmm3
	cmpq	%r10, %rcx
	je	.LBB1_15
# %bb.10:                               # %vec.epilog.iter.check
                                        #   in Loop: Header=BB1_2 Depth=1
	movq	%r10, %r14
	movq	%r10, %r15
	testb	$28, %cl
	je	.LBB1_14
.LBB1_11:                               # %vec.epilog.ph
                                        #   in Loop: Header=BB1_2 Depth=1
	vblendpd	$14, %ymm1, %ymm3, %ymm3        # ymm3 = ymm3[0],ymm1[1,2,3]
	.p2align	4, 0x90
.LBB1_12:                               # %vec.epilog.vector.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	(%rbx,%r15,8), %ymm4
	vmulpd	(%r8,%r15,8), %ymm4, %ymm4
	vaddpd	%ymm4, %ymm3, %ymm3
	addq	$4, %r15
	cmpq	%r15, %r9
	jne	.LBB1_12
# %bb.13:                               # %vec.epilog.middle.block
                                        #   in Loop: Header=BB1_2 Depth=1
	vextractf128	$1, %ymm3, %xmm4
	vaddpd	%xmm4, %xmm3, %xmm3
	vshufpd	$1, %xmm3, %xmm3, %xmm4         # xmm4 = xmm3[1,0]
	vaddsd	%xmm4, %xmm3, %xmm3
	movq	%r9, %r14
	cmpq	%r9, %rcx
	je	.LBB1_15
	.p2align	4, 0x90
.LBB1_14:                               # %j.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%rbx,%r14,8), %xmm4            # xmm4 = mem[0],zero
	vmulsd	(%r8,%r14,8), %xmm4, %xmm4
	vaddsd	%xmm4, %xmm3, %xmm3
	incq	%r14
	cmpq	%r14, %rcx
	jne	.LBB1_14
	jmp	.LBB1_15
.LBB1_16:
	popq	%rbx
	popq	%r14
	popq	%r15
.LBB1_17:                               # %i.exit
	vzeroupper
	retq
.Lfunc_end1:
	.size	bicg.parfor0, .Lfunc_end1-bicg.parfor0
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function bicg.parfor1
.LCPI2_0:
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	bicg.parfor1,@function
bicg.parfor1:                           # @bicg.parfor1
# %bb.0:                                # %entry
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	subq	$16, %rsp
	movq	%rdx, -56(%rsp)                 # 8-byte Spill
	movq	%rsi, -112(%rsp)                # 8-byte Spill
	cmpq	%rdx, %rsi
	jge	.LBB2_31
# %bb.1:                                # %j_block.body.lr.ph
	movq	8(%rdi), %rsi
	movq	16(%rdi), %rcx
	movq	24(%rdi), %rax
	movq	%rax, -64(%rsp)                 # 8-byte Spill
	movq	32(%rdi), %r9
	movq	40(%rdi), %rax
	movq	%rax, 8(%rsp)                   # 8-byte Spill
	movq	48(%rdi), %rdi
	movq	-112(%rsp), %rdx                # 8-byte Reload
	movq	%rdx, %r8
	shlq	$10, %r8
	movq	%r8, %r10
	negq	%r10
	leaq	1024(%r8), %r14
	movq	%rdx, %rax
	shlq	$13, %rax
	leaq	192(%r9,%rax), %r15
	movq	%rsi, -72(%rsp)                 # 8-byte Spill
	leaq	192(%rsi,%rax), %rax
	movq	%rax, -104(%rsp)                # 8-byte Spill
	shlq	$3, %rcx
	xorl	%ebx, %ebx
	movabsq	$-9223372036854775808, %r12     # imm = 0x8000000000000000
	vbroadcastsd	.LCPI2_0(%rip), %ymm0   # ymm0 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	vbroadcastsd	.LCPI2_0(%rip), %zmm1   # zmm1 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	movq	%r8, -80(%rsp)                  # 8-byte Spill
	movq	%r8, -88(%rsp)                  # 8-byte Spill
	movq	%r9, %rax
	xorl	%r8d, %r8d
	jmp	.LBB2_2
	.p2align	4, 0x90
.LBB2_30:                               # %i.exit
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	-48(%rsp), %rdx                 # 8-byte Reload
	incq	%rdx
	movq	-40(%rsp), %r8                  # 8-byte Reload
	incq	%r8
	movq	-16(%rsp), %r10                 # 8-byte Reload
	addq	$-1024, %r10                    # imm = 0xFC00
	movq	-24(%rsp), %r14                 # 8-byte Reload
	addq	$1024, %r14                     # imm = 0x400
	addq	$8192, %r15                     # imm = 0x2000
	addq	$8192, -104(%rsp)               # 8-byte Folded Spill
                                        # imm = 0x2000
	movq	-32(%rsp), %rbx                 # 8-byte Reload
	addq	$-1024, %rbx                    # imm = 0xFC00
	movq	-96(%rsp), %rax                 # 8-byte Reload
	addq	$8192, %rax                     # imm = 0x2000
	addq	$1024, -88(%rsp)                # 8-byte Folded Spill
                                        # imm = 0x400
	cmpq	-56(%rsp), %rdx                 # 8-byte Folded Reload
	movabsq	$-9223372036854775808, %r12     # imm = 0x8000000000000000
	je	.LBB2_31
.LBB2_2:                                # %j_block.body
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB2_16 Depth 2
                                        #     Child Loop BB2_7 Depth 2
                                        #     Child Loop BB2_20 Depth 2
                                        #     Child Loop BB2_11 Depth 2
                                        #       Child Loop BB2_22 Depth 3
                                        #       Child Loop BB2_26 Depth 3
                                        #       Child Loop BB2_28 Depth 3
	movq	%rax, -96(%rsp)                 # 8-byte Spill
	movq	-64(%rsp), %rsi                 # 8-byte Reload
	cmpq	%r14, %rsi
	movq	%r14, -24(%rsp)                 # 8-byte Spill
	cmovlq	%rsi, %r14
	movq	%r14, %r13
	andq	$-32, %r13
	movq	%r10, -16(%rsp)                 # 8-byte Spill
	addq	%r10, %r13
	movq	-112(%rsp), %rax                # 8-byte Reload
	movq	%r8, -40(%rsp)                  # 8-byte Spill
	addq	%r8, %rax
	shlq	$10, %rax
	leaq	1024(%rax), %rbp
	cmpq	%rbp, %rsi
	cmovlq	%rsi, %rbp
	movq	%rbp, -128(%rsp)                # 8-byte Spill
	subq	%rax, %rbp
	movq	%rdx, -48(%rsp)                 # 8-byte Spill
	shlq	$10, %rdx
	leaq	1024(%rdx), %r8
	cmpq	%rsi, %r8
	cmovgeq	%rsi, %r8
	cmpq	%r8, %rdx
	jge	.LBB2_9
# %bb.3:                                # %iter.check37
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	%rdx, %r10
	cmpq	$4, %rbp
	jb	.LBB2_20
# %bb.4:                                # %vector.main.loop.iter.check39
                                        #   in Loop: Header=BB2_2 Depth=1
	cmpq	$32, %rbp
	jae	.LBB2_15
# %bb.5:                                #   in Loop: Header=BB2_2 Depth=1
	xorl	%eax, %eax
	jmp	.LBB2_6
.LBB2_15:                               # %vector.ph40
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	-128(%rsp), %rsi                # 8-byte Reload
                                        # kill: def $esi killed $esi killed $rsi def $rsi
	andl	$31, %esi
	movq	%rbp, %rax
	subq	%rsi, %rax
	xorl	%r10d, %r10d
	.p2align	4, 0x90
.LBB2_16:                               # %vector.body43
                                        #   Parent Loop BB2_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovups	%zmm1, -192(%r15,%r10,8)
	vmovups	%zmm1, -128(%r15,%r10,8)
	vmovups	%zmm1, -64(%r15,%r10,8)
	vmovups	%zmm1, (%r15,%r10,8)
	addq	$32, %r10
	cmpq	%r10, %r13
	jne	.LBB2_16
# %bb.17:                               # %middle.block34
                                        #   in Loop: Header=BB2_2 Depth=1
	testq	%rsi, %rsi
	je	.LBB2_9
# %bb.18:                               # %vec.epilog.iter.check51
                                        #   in Loop: Header=BB2_2 Depth=1
	cmpl	$3, %esi
	ja	.LBB2_6
# %bb.19:                               #   in Loop: Header=BB2_2 Depth=1
	addq	%rdx, %rax
	movq	%rax, %r10
	jmp	.LBB2_20
.LBB2_6:                                # %vec.epilog.ph50
                                        #   in Loop: Header=BB2_2 Depth=1
	leaq	(%r14,%rbx), %rsi
	movl	%r14d, %r10d
	andl	$3, %r10d
	subq	%r10, %rsi
	movq	-128(%rsp), %r10                # 8-byte Reload
	movl	%r10d, %r11d
	andl	$3, %r11d
	movq	%rbp, %r10
	movq	%r11, -120(%rsp)                # 8-byte Spill
	subq	%r11, %r10
	addq	%rdx, %r10
	addq	-80(%rsp), %rax                 # 8-byte Folded Reload
	movq	-96(%rsp), %r11                 # 8-byte Reload
	.p2align	4, 0x90
.LBB2_7:                                # %vec.epilog.vector.body60
                                        #   Parent Loop BB2_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovups	%ymm0, (%r11,%rax,8)
	addq	$4, %rax
	cmpq	%rax, %rsi
	jne	.LBB2_7
# %bb.8:                                # %vec.epilog.middle.block48
                                        #   in Loop: Header=BB2_2 Depth=1
	cmpq	$0, -120(%rsp)                  # 8-byte Folded Reload
	je	.LBB2_9
	.p2align	4, 0x90
.LBB2_20:                               # %j_init.body
                                        #   Parent Loop BB2_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	movq	%r12, (%r9,%r10,8)
	incq	%r10
	cmpq	%r8, %r10
	jl	.LBB2_20
.LBB2_9:                                # %i.header.preheader
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	%rbx, -32(%rsp)                 # 8-byte Spill
	testq	%rdi, %rdi
	jle	.LBB2_30
# %bb.10:                               # %j.header.preheader.preheader
                                        #   in Loop: Header=BB2_2 Depth=1
	andq	$-4, %r14
	movq	-128(%rsp), %rax                # 8-byte Reload
	movl	%eax, %esi
	andl	$31, %esi
	movq	%rbp, %r10
	movq	%rsi, -120(%rsp)                # 8-byte Spill
	subq	%rsi, %r10
	movq	%r10, (%rsp)                    # 8-byte Spill
	leaq	(%rdx,%r10), %rsi
	movq	%rsi, -8(%rsp)                  # 8-byte Spill
	andl	$3, %eax
	movq	%rbp, %rbx
	movq	%rax, -128(%rsp)                # 8-byte Spill
	subq	%rax, %rbx
	addq	%rdx, %rbx
	movq	-72(%rsp), %r11                 # 8-byte Reload
	movq	-104(%rsp), %r10                # 8-byte Reload
	xorl	%eax, %eax
	jmp	.LBB2_11
	.p2align	4, 0x90
.LBB2_29:                               # %j.exit
                                        #   in Loop: Header=BB2_11 Depth=2
	incq	%rax
	addq	%rcx, %r10
	addq	%rcx, %r11
	cmpq	%rdi, %rax
	je	.LBB2_30
.LBB2_11:                               # %j.header.preheader
                                        #   Parent Loop BB2_2 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB2_22 Depth 3
                                        #       Child Loop BB2_26 Depth 3
                                        #       Child Loop BB2_28 Depth 3
	cmpq	%r8, %rdx
	jge	.LBB2_29
# %bb.12:                               # %iter.check
                                        #   in Loop: Header=BB2_11 Depth=2
	movq	8(%rsp), %rsi                   # 8-byte Reload
	vmovsd	(%rsi,%rax,8), %xmm2            # xmm2 = mem[0],zero
	movq	%rdx, %rsi
	cmpq	$4, %rbp
	jb	.LBB2_28
# %bb.13:                               # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB2_11 Depth=2
	cmpq	$32, %rbp
	jae	.LBB2_21
# %bb.14:                               #   in Loop: Header=BB2_11 Depth=2
	xorl	%r12d, %r12d
	jmp	.LBB2_25
.LBB2_21:                               # %vector.ph
                                        #   in Loop: Header=BB2_11 Depth=2
	vbroadcastsd	%xmm2, %zmm3
	xorl	%esi, %esi
	.p2align	4, 0x90
.LBB2_22:                               # %vector.body
                                        #   Parent Loop BB2_2 Depth=1
                                        #     Parent Loop BB2_11 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmulpd	-192(%r10,%rsi,8), %zmm3, %zmm4
	vmulpd	-128(%r10,%rsi,8), %zmm3, %zmm5
	vmulpd	-64(%r10,%rsi,8), %zmm3, %zmm6
	vmulpd	(%r10,%rsi,8), %zmm3, %zmm7
	vaddpd	-192(%r15,%rsi,8), %zmm4, %zmm4
	vaddpd	-128(%r15,%rsi,8), %zmm5, %zmm5
	vaddpd	-64(%r15,%rsi,8), %zmm6, %zmm6
	vaddpd	(%r15,%rsi,8), %zmm7, %zmm7
	vmovupd	%zmm4, -192(%r15,%rsi,8)
	vmovupd	%zmm5, -128(%r15,%rsi,8)
	vmovupd	%zmm6, -64(%r15,%rsi,8)
	vmovupd	%zmm7, (%r15,%rsi,8)
	addq	$32, %rsi
	cmpq	%rsi, %r13
	jne	.LBB2_22
# %bb.23:                               # %middle.block
                                        #   in Loop: Header=BB2_11 Depth=2
	cmpq	$0, -120(%rsp)                  # 8-byte Folded Reload
	je	.LBB2_29
# %bb.24:                               # %vec.epilog.iter.check
                                        #   in Loop: Header=BB2_11 Depth=2
	movq	-8(%rsp), %rsi                  # 8-byte Reload
	movq	(%rsp), %r12                    # 8-byte Reload
	cmpl	$3, -120(%rsp)                  # 4-byte Folded Reload
	jbe	.LBB2_28
.LBB2_25:                               # %vec.epilog.ph
                                        #   in Loop: Header=BB2_11 Depth=2
	vbroadcastsd	%xmm2, %ymm3
	addq	-88(%rsp), %r12                 # 8-byte Folded Reload
	.p2align	4, 0x90
.LBB2_26:                               # %vec.epilog.vector.body
                                        #   Parent Loop BB2_2 Depth=1
                                        #     Parent Loop BB2_11 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmulpd	(%r11,%r12,8), %ymm3, %ymm4
	vaddpd	(%r9,%r12,8), %ymm4, %ymm4
	vmovupd	%ymm4, (%r9,%r12,8)
	addq	$4, %r12
	cmpq	%r12, %r14
	jne	.LBB2_26
# %bb.27:                               # %vec.epilog.middle.block
                                        #   in Loop: Header=BB2_11 Depth=2
	movq	%rbx, %rsi
	cmpq	$0, -128(%rsp)                  # 8-byte Folded Reload
	je	.LBB2_29
	.p2align	4, 0x90
.LBB2_28:                               # %j.body
                                        #   Parent Loop BB2_2 Depth=1
                                        #     Parent Loop BB2_11 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmulsd	(%r11,%rsi,8), %xmm2, %xmm3
	vaddsd	(%r9,%rsi,8), %xmm3, %xmm3
	vmovsd	%xmm3, (%r9,%rsi,8)
	incq	%rsi
	cmpq	%r8, %rsi
	jl	.LBB2_28
	jmp	.LBB2_29
.LBB2_31:                               # %j_block.exit
	addq	$16, %rsp
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
	vzeroupper
	retq
.Lfunc_end2:
	.size	bicg.parfor1, .Lfunc_end2-bicg.parfor1
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function bicg.parfor2
.LCPI3_0:
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	bicg.parfor2,@function
bicg.parfor2:                           # @bicg.parfor2
# %bb.0:                                # %entry
	movq	%rdx, %rcx
	subq	%rsi, %rcx
	jle	.LBB3_15
# %bb.1:                                # %iter.check
	movq	8(%rdi), %rax
	cmpq	$4, %rcx
	jae	.LBB3_3
# %bb.2:
	movq	%rsi, %r8
	jmp	.LBB3_13
.LBB3_3:                                # %vector.main.loop.iter.check
	cmpq	$8, %rcx
	jae	.LBB3_8
# %bb.4:
	xorl	%edi, %edi
.LBB3_5:                                # %vec.epilog.ph
	movq	%rcx, %r9
	andq	$-4, %r9
	leaq	(%r9,%rsi), %r8
	leaq	(%rax,%rsi,8), %rsi
	vbroadcastsd	.LCPI3_0(%rip), %ymm0   # ymm0 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	.p2align	4, 0x90
.LBB3_6:                                # %vec.epilog.vector.body
                                        # =>This Inner Loop Header: Depth=1
	vmovups	%ymm0, (%rsi,%rdi,8)
	addq	$4, %rdi
	cmpq	%rdi, %r9
	jne	.LBB3_6
# %bb.7:                                # %vec.epilog.middle.block
	cmpq	%r9, %rcx
	jne	.LBB3_13
	jmp	.LBB3_15
.LBB3_8:                                # %vector.ph
	movq	%rcx, %rdi
	andq	$-8, %rdi
	leaq	(%rax,%rsi,8), %r8
	xorl	%r9d, %r9d
	vbroadcastsd	.LCPI3_0(%rip), %zmm0   # zmm0 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	.p2align	4, 0x90
.LBB3_9:                                # %vector.body
                                        # =>This Inner Loop Header: Depth=1
	vmovups	%zmm0, (%r8,%r9,8)
	addq	$8, %r9
	cmpq	%r9, %rdi
	jne	.LBB3_9
# %bb.10:                               # %middle.block
	cmpq	%rdi, %rcx
	je	.LBB3_15
# %bb.11:                               # %vec.epilog.iter.check
	testb	$4, %cl
	jne	.LBB3_5
# %bb.12:
	addq	%rsi, %rdi
	movq	%rdi, %r8
.LBB3_13:                               # %i_init.body.preheader
	movabsq	$-9223372036854775808, %rcx     # imm = 0x8000000000000000
	.p2align	4, 0x90
.LBB3_14:                               # %i_init.body
                                        # =>This Inner Loop Header: Depth=1
	movq	%rcx, (%rax,%r8,8)
	incq	%r8
	cmpq	%r8, %rdx
	jne	.LBB3_14
.LBB3_15:                               # %i_init.exit
	vzeroupper
	retq
.Lfunc_end3:
	.size	bicg.parfor2, .Lfunc_end3-bicg.parfor2
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function bicg.parfor3
.LCPI4_0:
	.quad	0x8000000000000000              # double -0
	.section	.rodata.cst32,"aM",@progbits,32
	.p2align	5, 0x0
.LCPI4_1:
	.zero	8
	.quad	0x8000000000000000              # double -0
	.quad	0x8000000000000000              # double -0
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	bicg.parfor3,@function
bicg.parfor3:                           # @bicg.parfor3
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB4_17
# %bb.1:                                # %j.header.preheader.lr.ph
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	movq	8(%rdi), %r12
	movq	16(%rdi), %rax
	movq	24(%rdi), %rcx
	movq	32(%rdi), %r9
	movq	48(%rdi), %r15
	movq	56(%rdi), %r10
	movq	64(%rdi), %r11
	imulq	40(%rdi), %r8
	leaq	(%r15,%r8), %rdi
	movabsq	$9223372036854775776, %rbx      # imm = 0x7FFFFFFFFFFFFFE0
	movq	%rcx, %r14
	andq	%rbx, %r14
	orq	$28, %rbx
	andq	%rcx, %rbx
	leaq	192(%r8,%r15), %r8
	movq	%rax, %r13
	imulq	%rsi, %r13
	leaq	192(%r12,%r13,8), %r15
	shlq	$3, %rax
	leaq	(%r12,%r13,8), %r12
	vmovsd	.LCPI4_0(%rip), %xmm0           # xmm0 = [-0.0E+0,0.0E+0]
	vbroadcastsd	.LCPI4_0(%rip), %ymm1   # ymm1 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	vbroadcastsd	.LCPI4_0(%rip), %zmm2   # zmm2 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	jmp	.LBB4_2
	.p2align	4, 0x90
.LBB4_15:                               # %j.exit
                                        #   in Loop: Header=BB4_2 Depth=1
	vmovsd	%xmm4, (%r11,%rsi,8)
	incq	%rsi
	addq	%rax, %r15
	addq	%rax, %r12
	cmpq	%rdx, %rsi
	je	.LBB4_16
.LBB4_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB4_8 Depth 2
                                        #     Child Loop BB4_12 Depth 2
                                        #     Child Loop BB4_14 Depth 2
	vmovapd	%xmm0, %xmm4
	testq	%rcx, %rcx
	jle	.LBB4_15
# %bb.3:                                # %iter.check
                                        #   in Loop: Header=BB4_2 Depth=1
	vmovsd	(%r10,%rsi,8), %xmm3            # xmm3 = mem[0],zero
	cmpq	$4, %rcx
	jae	.LBB4_5
# %bb.4:                                #   in Loop: Header=BB4_2 Depth=1
	xorl	%r13d, %r13d
	vmovapd	%xmm0, %xmm4
	jmp	.LBB4_14
	.p2align	4, 0x90
.LBB4_5:                                # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB4_2 Depth=1
	cmpq	$32, %rcx
	jae	.LBB4_7
# %bb.6:                                #   in Loop: Header=BB4_2 Depth=1
	vmovapd	%xmm0, %xmm4
	xorl	%ebp, %ebp
	jmp	.LBB4_11
.LBB4_7:                                # %vector.ph
                                        #   in Loop: Header=BB4_2 Depth=1
	vbroadcastsd	%xmm3, %zmm4
	xorl	%r13d, %r13d
	vmovapd	%zmm2, %zmm5
	vmovapd	%zmm2, %zmm6
	vmovapd	%zmm2, %zmm7
	vmovapd	%zmm2, %zmm8
	.p2align	4, 0x90
.LBB4_8:                                # %vector.body
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	-192(%r15,%r13,8), %zmm9
	vmovupd	-128(%r15,%r13,8), %zmm10
	vmovupd	-64(%r15,%r13,8), %zmm11
	vmovupd	(%r15,%r13,8), %zmm12
	vmulpd	(%r9,%r13,8), %zmm9, %zmm13
	vmulpd	64(%r9,%r13,8), %zmm10, %zmm14
	vaddpd	%zmm13, %zmm5, %zmm5
	vaddpd	%zmm14, %zmm6, %zmm6
	vmulpd	128(%r9,%r13,8), %zmm11, %zmm13
	vmulpd	192(%r9,%r13,8), %zmm12, %zmm14
	vaddpd	%zmm13, %zmm7, %zmm7
	vaddpd	%zmm14, %zmm8, %zmm8
	vmulpd	%zmm4, %zmm9, %zmm9
	vmulpd	%zmm4, %zmm10, %zmm10
	vmulpd	%zmm4, %zmm11, %zmm11
	vmulpd	%zmm4, %zmm12, %zmm12
	vaddpd	-192(%r8,%r13,8), %zmm9, %zmm9
	vaddpd	-128(%r8,%r13,8), %zmm10, %zmm10
	vaddpd	-64(%r8,%r13,8), %zmm11, %zmm11
	vaddpd	(%r8,%r13,8), %zmm12, %zmm12
	vmovupd	%zmm9, -192(%r8,%r13,8)
	vmovupd	%zmm10, -128(%r8,%r13,8)
	vmovupd	%zmm11, -64(%r8,%r13,8)
	vmovupd	%zmm12, (%r8,%r13,8)
	addq	$32, %r13
	cmpq	%r13, %r14
	jne	.LBB4_8
# %bb.9:                                # %middle.block
                                        #   in Loop: Header=BB4_2 Depth=1
	vaddpd	%zmm5, %zmm6, %zmm4
	vaddpd	%zmm4, %zmm7, %zmm4
	vaddpd	%zmm4, %zmm8, %zmm4
	vextractf64x4	$1, %zmm4, %ymm5
	vaddpd	%zmm5, %zmm4, %zmm4
	vextractf128	$1, %ymm4, %xmm5
	vaddpd	%xmm5, %xmm4, %xmm4
	vshufpd	$1, %xmm4, %xmm4, %xmm5         # xmm5 = xmm4[1,0]
	vaddsd	%xmm5, %xmm4, %xmm4
	cmpq	%r14, %rcx
	je	.LBB4_15
# %bb.10:                               # %vec.epilog.iter.check
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	%r14, %r13
	movq	%r14, %rbp
	testb	$28, %cl
	je	.LBB4_14
.LBB4_11:                               # %vec.epilog.ph
                                        #   in Loop: Header=BB4_2 Depth=1
	vblendpd	$14, %ymm1, %ymm4, %ymm4        # ymm4 = ymm4[0],ymm1[1,2,3]
	vbroadcastsd	%xmm3, %ymm5
	.p2align	4, 0x90
.LBB4_12:                               # %vec.epilog.vector.body
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	(%r12,%rbp,8), %ymm6
	vmulpd	(%r9,%rbp,8), %ymm6, %ymm7
	vaddpd	%ymm7, %ymm4, %ymm4
	vmulpd	%ymm5, %ymm6, %ymm6
	vaddpd	(%rdi,%rbp,8), %ymm6, %ymm6
	vmovupd	%ymm6, (%rdi,%rbp,8)
	addq	$4, %rbp
	cmpq	%rbp, %rbx
	jne	.LBB4_12
# %bb.13:                               # %vec.epilog.middle.block
                                        #   in Loop: Header=BB4_2 Depth=1
	vextractf128	$1, %ymm4, %xmm5
	vaddpd	%xmm5, %xmm4, %xmm4
	vshufpd	$1, %xmm4, %xmm4, %xmm5         # xmm5 = xmm4[1,0]
	vaddsd	%xmm5, %xmm4, %xmm4
	movq	%rbx, %r13
	cmpq	%rbx, %rcx
	je	.LBB4_15
	.p2align	4, 0x90
.LBB4_14:                               # %j.body
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%r12,%r13,8), %xmm5            # xmm5 = mem[0],zero
	vmulsd	(%r9,%r13,8), %xmm5, %xmm6
	vaddsd	%xmm6, %xmm4, %xmm4
	vmulsd	%xmm3, %xmm5, %xmm5
	vaddsd	(%rdi,%r13,8), %xmm5, %xmm5
	vmovsd	%xmm5, (%rdi,%r13,8)
	incq	%r13
	cmpq	%r13, %rcx
	jne	.LBB4_14
	jmp	.LBB4_15
.LBB4_16:
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
.LBB4_17:                               # %i.exit
	vzeroupper
	retq
.Lfunc_end4:
	.size	bicg.parfor3, .Lfunc_end4-bicg.parfor3
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function bicg.parfor4.atomic
.LCPI5_0:
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	bicg.parfor4.atomic,@function
bicg.parfor4.atomic:                    # @bicg.parfor4.atomic
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB5_9
# %bb.1:                                # %j.header.preheader.lr.ph
	pushq	%r15
	pushq	%r14
	pushq	%r12
	pushq	%rbx
	movq	8(%rdi), %rcx
	movq	16(%rdi), %r9
	movq	24(%rdi), %r10
	movq	32(%rdi), %r11
	movq	56(%rdi), %rbx
	movq	64(%rdi), %r14
	imulq	40(%rdi), %r8
	addq	48(%rdi), %r8
	vmovsd	.LCPI5_0(%rip), %xmm0           # xmm0 = [-0.0E+0,0.0E+0]
	jmp	.LBB5_2
	.p2align	4, 0x90
.LBB5_7:                                # %j.exit
                                        #   in Loop: Header=BB5_2 Depth=1
	vmovsd	%xmm1, (%r14,%rsi,8)
	incq	%rsi
	cmpq	%rdx, %rsi
	je	.LBB5_8
.LBB5_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB5_4 Depth 2
                                        #       Child Loop BB5_5 Depth 3
	vmovapd	%xmm0, %xmm1
	testq	%r10, %r10
	jle	.LBB5_7
# %bb.3:                                # %j.body.lr.ph
                                        #   in Loop: Header=BB5_2 Depth=1
	movq	%rsi, %rax
	imulq	%r9, %rax
	leaq	(%rcx,%rax,8), %rdi
	xorl	%r15d, %r15d
	vmovapd	%xmm0, %xmm1
	.p2align	4, 0x90
.LBB5_4:                                # %j.body
                                        #   Parent Loop BB5_2 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB5_5 Depth 3
	vmovsd	(%rdi,%r15,8), %xmm2            # xmm2 = mem[0],zero
	vmulsd	(%r11,%r15,8), %xmm2, %xmm3
	vaddsd	%xmm3, %xmm1, %xmm1
	vmulsd	(%rbx,%rsi,8), %xmm2, %xmm2
	vmovsd	(%r8,%r15,8), %xmm3             # xmm3 = mem[0],zero
	.p2align	4, 0x90
.LBB5_5:                                # %atomicrmw.start
                                        #   Parent Loop BB5_2 Depth=1
                                        #     Parent Loop BB5_4 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vaddsd	%xmm2, %xmm3, %xmm4
	vmovq	%xmm4, %r12
	vmovq	%xmm3, %rax
	lock		cmpxchgq	%r12, (%r8,%r15,8)
	vmovq	%rax, %xmm3
	jne	.LBB5_5
# %bb.6:                                # %atomicrmw.end
                                        #   in Loop: Header=BB5_4 Depth=2
	incq	%r15
	cmpq	%r10, %r15
	jne	.LBB5_4
	jmp	.LBB5_7
.LBB5_8:
	popq	%rbx
	popq	%r12
	popq	%r14
	popq	%r15
.LBB5_9:                                # %i.exit
	retq
.Lfunc_end5:
	.size	bicg.parfor4.atomic, .Lfunc_end5-bicg.parfor4.atomic
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function bicg.combine5
	.type	bicg.combine5,@function
bicg.combine5:                          # @bicg.combine5
# %bb.0:                                # %entry
	movq	24(%rdi), %rax
	testq	%rax, %rax
	jle	.LBB6_15
# %bb.1:                                # %piece.body.lr.ph
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	movq	%rsi, %r11
	movq	(%rdi), %rcx
	movq	8(%rdi), %r8
	movq	16(%rdi), %rdi
	movq	%rdx, %r14
	subq	%rsi, %r14
	movq	%r14, %r9
	andq	$-32, %r9
	addq	%r9, %rsi
	movq	%rsi, -16(%rsp)                 # 8-byte Spill
	movq	%r14, %rbx
	andq	$-4, %rbx
	leaq	(%rbx,%r11), %rsi
	movq	%rsi, -8(%rsp)                  # 8-byte Spill
	leaq	192(%rcx,%r11,8), %r15
	leaq	192(%r8,%r11,8), %r12
	leaq	(%r8,%r11,8), %r13
	xorl	%ebp, %ebp
	jmp	.LBB6_2
	.p2align	4, 0x90
.LBB6_13:                               # %e.exit
                                        #   in Loop: Header=BB6_2 Depth=1
	incq	%rbp
	addq	%rdi, %r12
	addq	%rdi, %r13
	addq	%rdi, %r8
	cmpq	%rax, %rbp
	je	.LBB6_14
.LBB6_2:                                # %piece.body
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB6_7 Depth 2
                                        #     Child Loop BB6_10 Depth 2
                                        #     Child Loop BB6_12 Depth 2
	cmpq	%r11, %rdx
	jle	.LBB6_13
# %bb.3:                                # %iter.check
                                        #   in Loop: Header=BB6_2 Depth=1
	movq	%r11, %rsi
	cmpq	$4, %r14
	jb	.LBB6_12
# %bb.4:                                # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB6_2 Depth=1
	cmpq	$32, %r14
	jae	.LBB6_6
# %bb.5:                                #   in Loop: Header=BB6_2 Depth=1
	xorl	%r10d, %r10d
	jmp	.LBB6_10
.LBB6_6:                                # %vector.body.preheader
                                        #   in Loop: Header=BB6_2 Depth=1
	xorl	%esi, %esi
	.p2align	4, 0x90
.LBB6_7:                                # %vector.body
                                        #   Parent Loop BB6_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	-192(%r15,%rsi,8), %zmm0
	vmovupd	-128(%r15,%rsi,8), %zmm1
	vmovupd	-64(%r15,%rsi,8), %zmm2
	vmovupd	(%r15,%rsi,8), %zmm3
	vaddpd	-192(%r12,%rsi,8), %zmm0, %zmm0
	vaddpd	-128(%r12,%rsi,8), %zmm1, %zmm1
	vaddpd	-64(%r12,%rsi,8), %zmm2, %zmm2
	vaddpd	(%r12,%rsi,8), %zmm3, %zmm3
	vmovupd	%zmm0, -192(%r15,%rsi,8)
	vmovupd	%zmm1, -128(%r15,%rsi,8)
	vmovupd	%zmm2, -64(%r15,%rsi,8)
	vmovupd	%zmm3, (%r15,%rsi,8)
	addq	$32, %rsi
	cmpq	%rsi, %r9
	jne	.LBB6_7
# %bb.8:                                # %middle.block
                                        #   in Loop: Header=BB6_2 Depth=1
	cmpq	%r9, %r14
	je	.LBB6_13
# %bb.9:                                # %vec.epilog.iter.check
                                        #   in Loop: Header=BB6_2 Depth=1
	movq	-16(%rsp), %rsi                 # 8-byte Reload
	movq	%r9, %r10
	testb	$28, %r14b
	je	.LBB6_12
	.p2align	4, 0x90
.LBB6_10:                               # %vec.epilog.vector.body
                                        #   Parent Loop BB6_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	-192(%r15,%r10,8), %ymm0
	vaddpd	(%r13,%r10,8), %ymm0, %ymm0
	vmovupd	%ymm0, -192(%r15,%r10,8)
	addq	$4, %r10
	cmpq	%r10, %rbx
	jne	.LBB6_10
# %bb.11:                               # %vec.epilog.middle.block
                                        #   in Loop: Header=BB6_2 Depth=1
	movq	-8(%rsp), %rsi                  # 8-byte Reload
	cmpq	%rbx, %r14
	je	.LBB6_13
	.p2align	4, 0x90
.LBB6_12:                               # %e.body
                                        #   Parent Loop BB6_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%rcx,%rsi,8), %xmm0            # xmm0 = mem[0],zero
	vaddsd	(%r8,%rsi,8), %xmm0, %xmm0
	vmovsd	%xmm0, (%rcx,%rsi,8)
	incq	%rsi
	cmpq	%rsi, %rdx
	jne	.LBB6_12
	jmp	.LBB6_13
.LBB6_14:
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
.LBB6_15:                               # %piece.exit
	vzeroupper
	retq
.Lfunc_end6:
	.size	bicg.combine5, .Lfunc_end6-bicg.combine5
                                        # -- End function
	.type	.Lcheck.message,@object         # @check.message
	.section	.rodata.str1.1,"aMS",@progbits,1
.Lcheck.message:
	.asciz	"shapes ({}) and ({}, {}) not aligned in `dot(arg1, arg0)` (at {@0}): {} (dim 0) != {} (dim 0)"
	.size	.Lcheck.message, 94

	.type	.Lcheck.message.1,@object       # @check.message.1
.Lcheck.message.1:
	.asciz	"shapes ({}, {}) and ({}) not aligned in `dot(arg0, arg2)` (at {@0}): {} (dim 1) != {} (dim 0)"
	.size	.Lcheck.message.1, 94

	.type	.Lalloc.name.2,@object          # @alloc.name.2
.Lalloc.name.2:
	.asciz	"dot"
	.size	.Lalloc.name.2, 4

	.type	.Ldot.identity,@object          # @dot.identity
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0
.Ldot.identity:
	.quad	0x8000000000000000              # double -0
	.size	.Ldot.identity, 8

	.section	".note.GNU-stack","",@progbits
