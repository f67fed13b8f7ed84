	.text
	.file	"gemver"
	.section	.rodata.cst32,"aM",@progbits,32
	.p2align	5, 0x0                          # -- Begin function kiln_entry_gemver
.LCPI0_0:
	.quad	0                               # 0x0
	.quad	4                               # 0x4
	.quad	5                               # 0x5
	.quad	3                               # 0x3
	.section	.rodata.cst4,"aM",@progbits,4
.LCPI0_1:
	.byte	0                               # 0x0
	.byte	4                               # 0x4
	.byte	5                               # 0x5
	.byte	3                               # 0x3
	.text
	.globl	kiln_entry_gemver
	.p2align	4, 0x90
	.type	kiln_entry_gemver,@function
kiln_entry_gemver:                      # @kiln_entry_gemver
# %bb.0:                                # %entry
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	subq	$328, %rsp                      # imm = 0x148
	movq	%rdx, %rbp
	movq	(%rdi), %rdx
	movq	8(%rdx), %r14
	vmovdqu	8(%rdx), %xmm0
	movq	56(%rdi), %rax
	movq	8(%rax), %rcx
	cmpq	%r14, %rcx
	jne	.LBB0_1
# %bb.2:                                # %check.ok
	movq	64(%rdi), %rcx
	movq	8(%rcx), %rsi
	vpextrq	$1, %xmm0, %r12
	cmpq	%rsi, %r12
	jne	.LBB0_3
# %bb.6:                                # %check.ok19
	movq	8(%rdi), %rsi
	movq	8(%rsi), %r8
	cmpq	%r12, %r8
	jne	.LBB0_7
# %bb.8:                                # %check.ok22
	movq	(%rdx), %r8
	movq	%r8, 16(%rsp)                   # 8-byte Spill
	movq	40(%rdx), %rdx
	movq	%rdx, 8(%rsp)                   # 8-byte Spill
	movq	(%rsi), %rbx
	movq	16(%rdi), %rdx
	movq	(%rdx), %r13
	movq	8(%rdx), %rdx
	movq	%rdx, 200(%rsp)                 # 8-byte Spill
	movq	24(%rdi), %rdx
	movq	(%rdx), %rdx
	movq	%rdx, 136(%rsp)                 # 8-byte Spill
	movq	32(%rdi), %rdx
	movq	(%rdx), %rdx
	movq	%rdx, 128(%rsp)                 # 8-byte Spill
	movq	40(%rdi), %rdx
	movq	(%rdx), %rdx
	movq	%rdx, 120(%rsp)                 # 8-byte Spill
	movq	48(%rdi), %rdx
	movq	(%rdx), %rdx
	movq	%rdx, 112(%rsp)                 # 8-byte Spill
	movq	(%rax), %rax
	movq	%rax, (%rsp)                    # 8-byte Spill
	movq	(%rcx), %rax
	movq	%rax, 192(%rsp)                 # 8-byte Spill
	movq	72(%rdi), %rax
	vmovsd	(%rax), %xmm0                   # xmm0 = mem[0],zero
	vmovsd	%xmm0, 168(%rsp)                # 8-byte Spill
	movq	80(%rdi), %rax
	vmovq	(%rax), %xmm0                   # xmm0 = mem[0],zero
	vmovq	%xmm0, 184(%rsp)                # 8-byte Folded Spill
	movq	%r12, 296(%rsp)
	leaq	.Lalloc.name(%rip), %r8
	leaq	296(%rsp), %rsi
	movl	$8, %ecx
	movq	%rbp, %rdi
	movl	$1, %edx
	vzeroupper
	callq	kiln_rt_alloc@PLT
	testq	%rax, %rax
	je	.LBB0_9
# %bb.10:                               # %ok
	movq	%rax, %r15
	movq	%r13, 160(%rsp)                 # 8-byte Spill
	movq	%rbx, 176(%rsp)                 # 8-byte Spill
	cmpq	$31745, %r12                    # imm = 0x7C01
	jl	.LBB0_15
# %bb.11:                               # %if.then
	leaq	1023(%r12), %rax
	leaq	2046(%r12), %r13
	testq	%rax, %rax
	cmovnsq	%rax, %r13
	sarq	$10, %r13
	movq	%rbp, 24(%rsp)
	movq	%r12, 32(%rsp)
	movq	16(%rsp), %rax                  # 8-byte Reload
	movq	%rax, 40(%rsp)
	movq	8(%rsp), %rax                   # 8-byte Reload
	movq	%rax, 48(%rsp)
	movq	136(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 56(%rsp)
	movq	128(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 64(%rsp)
	movq	120(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 72(%rsp)
	movq	112(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 80(%rsp)
	leaq	gemver.parfor0(%rip), %rdi
	leaq	24(%rsp), %rsi
	movl	$1, %ebx
	movl	$1, %r8d
	xorl	%edx, %edx
	movq	%r14, %rcx
	callq	kiln_rt_parfor@PLT
	cmpq	$2, %r14
	cmovgeq	%r14, %rbx
	cmpq	$32768, %rbx                    # imm = 0x8000
	movl	$32768, %eax                    # imm = 0x8000
	cmovlq	%rbx, %rax
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
	movq	16(%rsp), %rax                  # 8-byte Reload
	movq	%rax, 32(%rsp)
	movq	%r14, 40(%rsp)
	movq	8(%rsp), %rax                   # 8-byte Reload
	movq	%rax, 48(%rsp)
	movq	%r12, 56(%rsp)
	movq	%r15, 64(%rsp)
	movq	(%rsp), %rax                    # 8-byte Reload
	movq	%rax, 72(%rsp)
	leaq	gemver.parfor1(%rip), %rdi
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%r13, %rcx
	callq	kiln_rt_parfor@PLT
	jmp	.LBB0_12
.LBB0_15:                               # %if.else
	movq	%rbp, 24(%rsp)
	movq	%r15, 32(%rsp)
	leaq	gemver.parfor2(%rip), %rdi
	leaq	24(%rsp), %rsi
	movl	$10922, %r8d                    # imm = 0x2AAA
	xorl	%edx, %edx
	movq	%r12, %rcx
	callq	kiln_rt_parfor@PLT
	cmpq	$2, %r12
	movl	$1, %eax
	cmovgeq	%r12, %rax
	leal	(%rax,%rax,8), %ecx
	leal	(%rcx,%rcx,2), %ecx
	addl	%eax, %ecx
	movl	$32768, %eax                    # imm = 0x8000
	xorl	%edx, %edx
	divl	%ecx
                                        # kill: def $eax killed $eax def $rax
	cmpl	$1, %eax
	adcl	$0, %eax
	xorl	%edi, %edi
	movq	%r14, %rsi
	movq	%rax, %rdx
	callq	kiln_rt_parfor_width@PLT
	movq	%rax, 152(%rsp)                 # 8-byte Spill
	leaq	.Ldot.identity(%rip), %rcx
	movl	$8, %edx
	movq	%rax, %rdi
	movq	%r12, %rsi
	callq	kiln_rt_private_copies@PLT
	movq	%rax, %rbx
	leaq	63(,%r12,8), %r13
	andq	$-64, %r13
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
	testq	%rbx, %rbx
	movq	%r15, %rax
	cmovneq	%rbx, %rax
	movq	%r13, 144(%rsp)                 # 8-byte Spill
	movq	%r13, %rcx
	movq	152(%rsp), %r13                 # 8-byte Reload
	cmoveq	%rbx, %rcx
	leaq	gemver.parfor4.atomic(%rip), %rdi
	leaq	gemver.parfor3(%rip), %rdx
	cmovneq	%rdx, %rdi
	cmpq	$2, %r13
	cmovlq	%rdx, %rdi
	movq	%rbp, 24(%rsp)
	movq	%r12, 32(%rsp)
	movq	16(%rsp), %rdx                  # 8-byte Reload
	movq	%rdx, 40(%rsp)
	movq	8(%rsp), %rdx                   # 8-byte Reload
	movq	%rdx, 48(%rsp)
	movq	136(%rsp), %rdx                 # 8-byte Reload
	movq	%rdx, 56(%rsp)
	movq	128(%rsp), %rdx                 # 8-byte Reload
	movq	%rdx, 64(%rsp)
	movq	120(%rsp), %rdx                 # 8-byte Reload
	movq	%rdx, 72(%rsp)
	movq	112(%rsp), %rdx                 # 8-byte Reload
	movq	%rdx, 80(%rsp)
	movq	%rcx, 88(%rsp)
	movq	%rax, 96(%rsp)
	movq	(%rsp), %rax                    # 8-byte Reload
	movq	%rax, 104(%rsp)
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%r14, %rcx
	movq	%r13, %r8
	callq	kiln_rt_parfor_pieces@PLT
	testq	%rbx, %rbx
	je	.LBB0_12
# %bb.16:                               # %copies.combine
	movq	%r15, (%rsp)                    # 8-byte Spill
	movq	%r15, 24(%rsp)
	movq	%rbx, 32(%rsp)
	movq	144(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 40(%rsp)
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
	leaq	gemver.combine5(%rip), %rdi
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%r12, %rcx
	callq	kiln_rt_parfor@PLT
	movq	%rbx, %rdi
	callq	kiln_rt_free@PLT
	movq	(%rsp), %r15                    # 8-byte Reload
.LBB0_12:                               # %if.end
	movq	%rbp, 24(%rsp)
	vmovq	184(%rsp), %xmm0                # 8-byte Folded Reload
                                        # xmm0 = mem[0],zero
	vmovq	%xmm0, 32(%rsp)
	movq	%r15, 40(%rsp)
	movq	192(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 48(%rsp)
	movq	176(%rsp), %r13                 # 8-byte Reload
	movq	%r13, 56(%rsp)
	leaq	gemver.parfor6(%rip), %rdi
	leaq	24(%rsp), %rsi
	movl	$2340, %r8d                     # imm = 0x924
	xorl	%edx, %edx
	movq	%r12, %rcx
	callq	kiln_rt_parfor@PLT
	movq	200(%rsp), %rax                 # 8-byte Reload
	cmpq	%r14, %rax
	jne	.LBB0_13
# %bb.20:                               # %check.ok29
	cmpq	$2, %r12
	movl	$1, %eax
	cmovgeq	%r12, %rax
	cmpq	$32768, %rax                    # imm = 0x8000
	movl	$32768, %ecx                    # imm = 0x8000
	cmovgeq	%rcx, %rax
	shll	$3, %eax
	cmpq	$32768, %rax                    # imm = 0x8000
	cmovbq	%rax, %rcx
	incq	%rcx
	cmpq	$32759, %rcx                    # imm = 0x7FF7
	movl	$32759, %esi                    # imm = 0x7FF7
	cmovbq	%rcx, %rsi
	addl	$10, %esi
	movw	$-32768, %ax                    # imm = 0x8000
	xorl	%edx, %edx
	divw	%si
                                        # kill: def $ax killed $ax def $eax
	cmpw	$2, %ax
	movl	$1, %ecx
	cmovael	%eax, %ecx
	movzwl	%cx, %r8d
	movq	%rbp, 24(%rsp)
	movq	16(%rsp), %rax                  # 8-byte Reload
	movq	%rax, 32(%rsp)
	movq	8(%rsp), %rax                   # 8-byte Reload
	movq	%rax, 40(%rsp)
	movq	%r12, 48(%rsp)
	movq	%r13, 56(%rsp)
	vmovq	168(%rsp), %xmm0                # 8-byte Folded Reload
                                        # xmm0 = mem[0],zero
	vmovq	%xmm0, 64(%rsp)
	movq	160(%rsp), %rax                 # 8-byte Reload
	movq	%rax, 72(%rsp)
	leaq	gemver.parfor7(%rip), %rdi
	leaq	24(%rsp), %rsi
	xorl	%edx, %edx
	movq	%r14, %rcx
	callq	kiln_rt_parfor@PLT
	movq	%r15, %rdi
	callq	kiln_rt_free@PLT
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
	xorl	%eax, %eax
.LBB0_21:                               # %common.ret
                                        # kill: def $eax killed $eax killed $rax
	addq	$328, %rsp                      # imm = 0x148
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
	retq
.LBB0_1:                                # %check.failed
	vpbroadcastq	%rcx, %ymm1
	vpmovsxbq	.LCPI0_1(%rip), %ymm2   # ymm2 = [0,4,5,3]
	vpermi2q	%ymm0, %ymm1, %ymm2
	vmovdqu	%ymm2, 256(%rsp)
	movq	%r14, 288(%rsp)
	leaq	.Lcheck.message(%rip), %rdx
	leaq	256(%rsp), %rcx
	movq	%rbp, %rbx
	movq	%rbp, %rdi
	movl	$2, %esi
	movl	$5, %r8d
	jmp	.LBB0_5
.LBB0_3:                                # %check.failed18
	movq	%r12, 240(%rsp)
	movq	%rsi, 248(%rsp)
	leaq	.Lcheck.message.1(%rip), %rdx
	leaq	240(%rsp), %rcx
	jmp	.LBB0_4
.LBB0_7:                                # %check.failed21
	movq	%r12, 224(%rsp)
	movq	%r8, 232(%rsp)
	leaq	.Lcheck.message.2(%rip), %rdx
	leaq	224(%rsp), %rcx
.LBB0_4:                                # %fail
	movq	%rbp, %rbx
	movq	%rbp, %rdi
	movl	$2, %esi
	movl	$2, %r8d
.LBB0_5:                                # %fail
	vzeroupper
	callq	kiln_rt_fail@PLT
	xorl	%r15d, %r15d
	jmp	.LBB0_14
.LBB0_9:
	movq	%rbp, %rbx
	xorl	%r15d, %r15d
	jmp	.LBB0_14
.LBB0_13:                               # %check.failed28
	movq	%r14, 208(%rsp)
	movq	%rax, 216(%rsp)
	leaq	.Lcheck.message.3(%rip), %rdx
	leaq	208(%rsp), %rcx
	movq	%rbp, %rbx
	movq	%rbp, %rdi
	movl	$2, %esi
	movl	$2, %r8d
	callq	kiln_rt_fail@PLT
.LBB0_14:                               # %fail
	movq	%r15, %rdi
	callq	kiln_rt_free@PLT
	xorl	%edi, %edi
	callq	kiln_rt_free@PLT
	movl	(%rbx), %eax
	jmp	.LBB0_21
.Lfunc_end0:
	.size	kiln_entry_gemver, .Lfunc_end0-kiln_entry_gemver
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function gemver.parfor0
	.type	gemver.parfor0,@function
gemver.parfor0:                         # @gemver.parfor0
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB1_16
# %bb.1:                                # %j.header.preheader.lr.ph
	pushq	%r15
	pushq	%r14
	pushq	%r12
	pushq	%rbx
	movq	8(%rdi), %rax
	movq	16(%rdi), %r14
	movq	24(%rdi), %rcx
	movq	32(%rdi), %r8
	movq	40(%rdi), %r9
	movq	48(%rdi), %r10
	movq	56(%rdi), %rdi
	movabsq	$9223372036854775800, %r11      # imm = 0x7FFFFFFFFFFFFFF8
	movq	%rax, %rbx
	andq	%r11, %rbx
	orq	$4, %r11
	andq	%rax, %r11
	movq	%rcx, %r15
	imulq	%rsi, %r15
	leaq	(%r14,%r15,8), %r14
	shlq	$3, %rcx
	jmp	.LBB1_2
	.p2align	4, 0x90
.LBB1_14:                               # %j.exit
                                        #   in Loop: Header=BB1_2 Depth=1
	incq	%rsi
	addq	%rcx, %r14
	cmpq	%rdx, %rsi
	je	.LBB1_15
.LBB1_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB1_8 Depth 2
                                        #     Child Loop BB1_11 Depth 2
                                        #     Child Loop BB1_13 Depth 2
	testq	%rax, %rax
	jle	.LBB1_14
# %bb.3:                                # %iter.check
                                        #   in Loop: Header=BB1_2 Depth=1
	cmpq	$4, %rax
	jae	.LBB1_5
# %bb.4:                                #   in Loop: Header=BB1_2 Depth=1
	xorl	%r15d, %r15d
	jmp	.LBB1_13
	.p2align	4, 0x90
.LBB1_5:                                # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB1_2 Depth=1
	cmpq	$8, %rax
	jae	.LBB1_7
# %bb.6:                                #   in Loop: Header=BB1_2 Depth=1
	xorl	%r12d, %r12d
	.p2align	4, 0x90
.LBB1_11:                               # %vec.epilog.vector.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vbroadcastsd	(%r8,%rsi,8), %ymm0
	vmulpd	(%r9,%r12,8), %ymm0, %ymm0
	vaddpd	(%r14,%r12,8), %ymm0, %ymm0
	vbroadcastsd	(%r10,%rsi,8), %ymm1
	vmulpd	(%rdi,%r12,8), %ymm1, %ymm1
	vaddpd	%ymm1, %ymm0, %ymm0
	vmovupd	%ymm0, (%r14,%r12,8)
	addq	$4, %r12
	cmpq	%r12, %r11
	jne	.LBB1_11
# %bb.12:                               # %vec.epilog.middle.block
                                        #   in Loop: Header=BB1_2 Depth=1
	movq	%r11, %r15
	cmpq	%r11, %rax
	jne	.LBB1_13
	jmp	.LBB1_14
.LBB1_7:                                # %vector.body.preheader
                                        #   in Loop: Header=BB1_2 Depth=1
	xorl	%r15d, %r15d
	.p2align	4, 0x90
.LBB1_8:                                # %vector.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vbroadcastsd	(%r8,%rsi,8), %zmm0
	vmulpd	(%r9,%r15,8), %zmm0, %zmm0
	vaddpd	(%r14,%r15,8), %zmm0, %zmm0
	vbroadcastsd	(%r10,%rsi,8), %zmm1
	vmulpd	(%rdi,%r15,8), %zmm1, %zmm1
	vaddpd	%zmm1, %zmm0, %zmm0
	vmovupd	%zmm0, (%r14,%r15,8)
	addq	$8, %r15
	cmpq	%r15, %rbx
	jne	.LBB1_8
# %bb.9:                                # %middle.block
                                        #   in Loop: Header=BB1_2 Depth=1
	cmpq	%rbx, %rax
	je	.LBB1_14
# %bb.10:                               # %vec.epilog.iter.check
                                        #   in Loop: Header=BB1_2 Depth=1
	movq	%rbx, %r15
	movq	%rbx, %r12
	testb	$4, %al
	jne	.LBB1_11
	.p2align	4, 0x90
.LBB1_13:                               # %j.body
                                        #   Parent Loop BB1_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%r8,%rsi,8), %xmm0             # xmm0 = mem[0],zero
	vmulsd	(%r9,%r15,8), %xmm0, %xmm0
	vaddsd	(%r14,%r15,8), %xmm0, %xmm0
	vmovsd	(%r10,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	(%rdi,%r15,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, (%r14,%r15,8)
	incq	%r15
	cmpq	%r15, %rax
	jne	.LBB1_13
	jmp	.LBB1_14
.LBB1_15:
	popq	%rbx
	popq	%r12
	popq	%r14
	popq	%r15
.LBB1_16:                               # %i.exit
	vzeroupper
	retq
.Lfunc_end1:
	.size	gemver.parfor0, .Lfunc_end1-gemver.parfor0
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function gemver.parfor1
.LCPI2_0:
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	gemver.parfor1,@function
gemver.parfor1:                         # @gemver.parfor1
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
	movq	24(%rdi), %r8
	movq	32(%rdi), %rax
	movq	%rax, -64(%rsp)                 # 8-byte Spill
	movq	40(%rdi), %r10
	movq	48(%rdi), %rax
	movq	%rax, 8(%rsp)                   # 8-byte Spill
	movq	-112(%rsp), %rdx                # 8-byte Reload
	movq	%rdx, %rdi
	shlq	$10, %rdi
	movq	%rdi, %r9
	negq	%r9
	leaq	1024(%rdi), %r14
	movq	%rdx, %rax
	shlq	$13, %rax
	leaq	192(%r10,%rax), %r15
	movq	%rsi, -72(%rsp)                 # 8-byte Spill
	leaq	192(%rsi,%rax), %rax
	movq	%rax, -104(%rsp)                # 8-byte Spill
	shlq	$3, %r8
	xorl	%ebx, %ebx
	movabsq	$-9223372036854775808, %r12     # imm = 0x8000000000000000
	vbroadcastsd	.LCPI2_0(%rip), %ymm0   # ymm0 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	vbroadcastsd	.LCPI2_0(%rip), %zmm1   # zmm1 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	movq	%rdi, -80(%rsp)                 # 8-byte Spill
	movq	%rdi, -88(%rsp)                 # 8-byte Spill
	movq	%r10, %rax
	xorl	%edi, %edi
	jmp	.LBB2_2
	.p2align	4, 0x90
.LBB2_30:                               # %i.exit
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	-48(%rsp), %rdx                 # 8-byte Reload
	incq	%rdx
	movq	-40(%rsp), %rdi                 # 8-byte Reload
	incq	%rdi
	movq	-16(%rsp), %r9                  # 8-byte Reload
	addq	$-1024, %r9                     # imm = 0xFC00
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
	movq	%r9, -16(%rsp)                  # 8-byte Spill
	addq	%r9, %r13
	movq	-112(%rsp), %rax                # 8-byte Reload
	movq	%rdi, -40(%rsp)                 # 8-byte Spill
	addq	%rdi, %rax
	shlq	$10, %rax
	leaq	1024(%rax), %rbp
	cmpq	%rbp, %rsi
	cmovlq	%rsi, %rbp
	movq	%rbp, -128(%rsp)                # 8-byte Spill
	subq	%rax, %rbp
	movq	%rdx, -48(%rsp)                 # 8-byte Spill
	shlq	$10, %rdx
	leaq	1024(%rdx), %r9
	cmpq	%rsi, %r9
	cmovgeq	%rsi, %r9
	cmpq	%r9, %rdx
	jge	.LBB2_9
# %bb.3:                                # %iter.check37
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	%rdx, %rdi
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
	xorl	%edi, %edi
	.p2align	4, 0x90
.LBB2_16:                               # %vector.body43
                                        #   Parent Loop BB2_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovups	%zmm1, -192(%r15,%rdi,8)
	vmovups	%zmm1, -128(%r15,%rdi,8)
	vmovups	%zmm1, -64(%r15,%rdi,8)
	vmovups	%zmm1, (%r15,%rdi,8)
	addq	$32, %rdi
	cmpq	%rdi, %r13
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
	movq	%rax, %rdi
	jmp	.LBB2_20
.LBB2_6:                                # %vec.epilog.ph50
                                        #   in Loop: Header=BB2_2 Depth=1
	leaq	(%r14,%rbx), %rsi
	movl	%r14d, %edi
	andl	$3, %edi
	subq	%rdi, %rsi
	movq	-128(%rsp), %rdi                # 8-byte Reload
	movl	%edi, %r11d
	andl	$3, %r11d
	movq	%rbp, %rdi
	movq	%r11, -120(%rsp)                # 8-byte Spill
	subq	%r11, %rdi
	addq	%rdx, %rdi
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
	movq	%r12, (%r10,%rdi,8)
	incq	%rdi
	cmpq	%r9, %rdi
	jl	.LBB2_20
.LBB2_9:                                # %i.header.preheader
                                        #   in Loop: Header=BB2_2 Depth=1
	movq	%rbx, -32(%rsp)                 # 8-byte Spill
	testq	%rcx, %rcx
	jle	.LBB2_30
# %bb.10:                               # %j.header.preheader.preheader
                                        #   in Loop: Header=BB2_2 Depth=1
	andq	$-4, %r14
	movq	-128(%rsp), %rax                # 8-byte Reload
	movl	%eax, %esi
	andl	$31, %esi
	movq	%rbp, %rdi
	movq	%rsi, -120(%rsp)                # 8-byte Spill
	subq	%rsi, %rdi
	movq	%rdi, (%rsp)                    # 8-byte Spill
	leaq	(%rdx,%rdi), %rsi
	movq	%rsi, -8(%rsp)                  # 8-byte Spill
	andl	$3, %eax
	movq	%rbp, %rbx
	movq	%rax, -128(%rsp)                # 8-byte Spill
	subq	%rax, %rbx
	addq	%rdx, %rbx
	movq	-72(%rsp), %r11                 # 8-byte Reload
	movq	-104(%rsp), %rdi                # 8-byte Reload
	xorl	%eax, %eax
	jmp	.LBB2_11
	.p2align	4, 0x90
.LBB2_29:                               # %j.exit
                                        #   in Loop: Header=BB2_11 Depth=2
	incq	%rax
	addq	%r8, %rdi
	addq	%r8, %r11
	cmpq	%rcx, %rax
	je	.LBB2_30
.LBB2_11:                               # %j.header.preheader
                                        #   Parent Loop BB2_2 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB2_22 Depth 3
                                        #       Child Loop BB2_26 Depth 3
                                        #       Child Loop BB2_28 Depth 3
	cmpq	%r9, %rdx
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
	vmulpd	-192(%rdi,%rsi,8), %zmm3, %zmm4
	vmulpd	-128(%rdi,%rsi,8), %zmm3, %zmm5
	vmulpd	-64(%rdi,%rsi,8), %zmm3, %zmm6
	vmulpd	(%rdi,%rsi,8), %zmm3, %zmm7
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
	vaddpd	(%r10,%r12,8), %ymm4, %ymm4
	vmovupd	%ymm4, (%r10,%r12,8)
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
	vaddsd	(%r10,%rsi,8), %xmm3, %xmm3
	vmovsd	%xmm3, (%r10,%rsi,8)
	incq	%rsi
	cmpq	%r9, %rsi
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
	.size	gemver.parfor1, .Lfunc_end2-gemver.parfor1
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function gemver.parfor2
.LCPI3_0:
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	gemver.parfor2,@function
gemver.parfor2:                         # @gemver.parfor2
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
	.size	gemver.parfor2, .Lfunc_end3-gemver.parfor2
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function gemver.parfor3
	.type	gemver.parfor3,@function
gemver.parfor3:                         # @gemver.parfor3
# %bb.0:                                # %entry
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	movq	%rdx, -32(%rsp)                 # 8-byte Spill
	cmpq	%rdx, %rsi
	jge	.LBB4_21
# %bb.1:                                # %j.header.preheader.lr.ph
	movq	8(%rdi), %r15
	movq	16(%rdi), %r14
	movq	%r14, -56(%rsp)                 # 8-byte Spill
	movq	24(%rdi), %r13
	movq	32(%rdi), %r9
	movq	40(%rdi), %r10
	movq	48(%rdi), %r11
	imulq	64(%rdi), %r8
	movq	%r8, -64(%rsp)                  # 8-byte Spill
	movq	%r13, %rax
	imulq	%rsi, %rax
	movq	%rax, -48(%rsp)                 # 8-byte Spill
	leaq	(%r14,%rax,8), %rbx
	movq	-32(%rsp), %rax                 # 8-byte Reload
	leaq	-8(,%rax,8), %rcx
	imulq	%r13, %rcx
	movq	%r13, -40(%rsp)                 # 8-byte Spill
	addq	%r14, %rcx
	movq	%r15, %r8
	leaq	(%rcx,%r15,8), %rcx
	leaq	(%r9,%rsi,8), %rdx
	leaq	(%r9,%rax,8), %r14
	leaq	(%r10,%r15,8), %r15
	leaq	(%r11,%rsi,8), %r12
	cmpq	%r14, %rbx
	setb	%bpl
	cmpq	%rcx, %rdx
	setb	%dl
	leaq	(%r11,%rax,8), %r14
	andb	%bpl, %dl
	cmpq	%r15, %rbx
	setb	%bpl
	cmpq	%rcx, %r10
	setb	%r15b
	andb	%bpl, %r15b
	shrq	$60, %r13
	andl	$1, %r13d
	orb	%r15b, %r13b
	cmpq	%r14, %rbx
	setb	%bpl
	cmpq	%rcx, %r12
	setb	%r12b
	movq	56(%rdi), %r14
	andb	%bpl, %r12b
	movq	80(%rdi), %r15
	orb	%dl, %r12b
	orb	%r13b, %r12b
	leaq	(%r14,%r8,8), %rdx
	cmpq	%rdx, %rbx
	setb	%dl
	cmpq	%rcx, %r14
	setb	%bpl
	andb	%dl, %bpl
	leaq	(%r15,%rax,8), %rdx
	cmpq	%rdx, %rbx
	leaq	(%r15,%rsi,8), %rdx
	setb	%r13b
	cmpq	%rcx, %rdx
	movq	72(%rdi), %rcx
	movq	-64(%rsp), %rdx                 # 8-byte Reload
	leaq	(%rcx,%rdx), %rdi
	setb	%al
	andb	%r13b, %al
	orb	%bpl, %al
	orb	%r12b, %al
	movb	%al, -73(%rsp)                  # 1-byte Spill
	movabsq	$9223372036854775800, %r12      # imm = 0x7FFFFFFFFFFFFFF8
	leaq	24(%rdx,%rcx), %rax
	movq	%rax, -8(%rsp)                  # 8-byte Spill
	movq	%r8, %rax
	movq	%r8, %rcx
	andq	%r12, %rcx
	movq	%rcx, -64(%rsp)                 # 8-byte Spill
	orq	$4, %r12
	andq	%r8, %r12
	movq	-48(%rsp), %rcx                 # 8-byte Reload
	movq	-56(%rsp), %rdx                 # 8-byte Reload
	leaq	16(%rdx,%rcx,8), %rcx
	movq	%rcx, -48(%rsp)                 # 8-byte Spill
	movl	%eax, %ecx
	andl	$3, %ecx
	movq	%rcx, -56(%rsp)                 # 8-byte Spill
	shlq	$3, -40(%rsp)                   # 8-byte Folded Spill
	leaq	24(%r14), %rcx
	movq	%rcx, -16(%rsp)                 # 8-byte Spill
	leaq	24(%r10), %rcx
	movq	%rcx, -24(%rsp)                 # 8-byte Spill
	movq	%r8, -72(%rsp)                  # 8-byte Spill
	jmp	.LBB4_2
	.p2align	4, 0x90
.LBB4_20:                               # %j.exit
                                        #   in Loop: Header=BB4_2 Depth=1
	incq	%rsi
	movq	-40(%rsp), %rax                 # 8-byte Reload
	addq	%rax, %rbx
	addq	%rax, -48(%rsp)                 # 8-byte Folded Spill
	cmpq	-32(%rsp), %rsi                 # 8-byte Folded Reload
	movq	-72(%rsp), %rax                 # 8-byte Reload
	je	.LBB4_21
.LBB4_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB4_11 Depth 2
                                        #     Child Loop BB4_8 Depth 2
                                        #     Child Loop BB4_16 Depth 2
                                        #     Child Loop BB4_19 Depth 2
	testq	%rax, %rax
	jle	.LBB4_20
# %bb.3:                                # %iter.check
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	-72(%rsp), %rcx                 # 8-byte Reload
	cmpq	$4, %rcx
	setb	%al
	orb	-73(%rsp), %al                  # 1-byte Folded Reload
	testb	$1, %al
	je	.LBB4_5
# %bb.4:                                #   in Loop: Header=BB4_2 Depth=1
	xorl	%eax, %eax
	jmp	.LBB4_14
	.p2align	4, 0x90
.LBB4_5:                                # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB4_2 Depth=1
	cmpq	$8, %rcx
	jae	.LBB4_10
# %bb.6:                                #   in Loop: Header=BB4_2 Depth=1
	xorl	%ecx, %ecx
.LBB4_7:                                # %vec.epilog.ph
                                        #   in Loop: Header=BB4_2 Depth=1
	vbroadcastsd	(%r9,%rsi,8), %ymm0
	vbroadcastsd	(%r11,%rsi,8), %ymm1
	vbroadcastsd	(%r15,%rsi,8), %ymm2
	.p2align	4, 0x90
.LBB4_8:                                # %vec.epilog.vector.body
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmulpd	(%r10,%rcx,8), %ymm0, %ymm3
	vaddpd	(%rbx,%rcx,8), %ymm3, %ymm3
	vmulpd	(%r14,%rcx,8), %ymm1, %ymm4
	vaddpd	%ymm4, %ymm3, %ymm3
	vmovupd	%ymm3, (%rbx,%rcx,8)
	vmulpd	%ymm2, %ymm3, %ymm3
	vaddpd	(%rdi,%rcx,8), %ymm3, %ymm3
	vmovupd	%ymm3, (%rdi,%rcx,8)
	addq	$4, %rcx
	cmpq	%rcx, %r12
	jne	.LBB4_8
# %bb.9:                                # %vec.epilog.middle.block
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	%r12, %rax
	cmpq	%r12, -72(%rsp)                 # 8-byte Folded Reload
	je	.LBB4_20
	jmp	.LBB4_14
.LBB4_10:                               # %vector.ph
                                        #   in Loop: Header=BB4_2 Depth=1
	vbroadcastsd	(%r9,%rsi,8), %zmm0
	vbroadcastsd	(%r11,%rsi,8), %zmm1
	vbroadcastsd	(%r15,%rsi,8), %zmm2
	xorl	%eax, %eax
	movq	-64(%rsp), %rdx                 # 8-byte Reload
	.p2align	4, 0x90
.LBB4_11:                               # %vector.body
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmulpd	(%r10,%rax,8), %zmm0, %zmm3
	vaddpd	(%rbx,%rax,8), %zmm3, %zmm3
	vmulpd	(%r14,%rax,8), %zmm1, %zmm4
	vaddpd	%zmm4, %zmm3, %zmm3
	vmovupd	%zmm3, (%rbx,%rax,8)
	vmulpd	%zmm2, %zmm3, %zmm3
	vaddpd	(%rdi,%rax,8), %zmm3, %zmm3
	vmovupd	%zmm3, (%rdi,%rax,8)
	addq	$8, %rax
	cmpq	%rax, %rdx
	jne	.LBB4_11
# %bb.12:                               # %middle.block
                                        #   in Loop: Header=BB4_2 Depth=1
	cmpq	%rdx, %rcx
	je	.LBB4_20
# %bb.13:                               # %vec.epilog.iter.check
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	-64(%rsp), %rcx                 # 8-byte Reload
	movq	%rcx, %rax
	testb	$4, -72(%rsp)                   # 1-byte Folded Reload
	jne	.LBB4_7
	.p2align	4, 0x90
.LBB4_14:                               # %j.body.preheader
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	%rax, %r8
	cmpq	$0, -56(%rsp)                   # 8-byte Folded Reload
	je	.LBB4_17
# %bb.15:                               # %j.body.prol.preheader
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	-56(%rsp), %rcx                 # 8-byte Reload
	movq	%rax, %r8
	.p2align	4, 0x90
.LBB4_16:                               # %j.body.prol
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%r9,%rsi,8), %xmm0             # xmm0 = mem[0],zero
	vmulsd	(%r10,%r8,8), %xmm0, %xmm0
	vaddsd	(%rbx,%r8,8), %xmm0, %xmm0
	vmovsd	(%r11,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	(%r14,%r8,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, (%rbx,%r8,8)
	vmulsd	(%r15,%rsi,8), %xmm0, %xmm0
	vaddsd	(%rdi,%r8,8), %xmm0, %xmm0
	vmovsd	%xmm0, (%rdi,%r8,8)
	incq	%r8
	decq	%rcx
	jne	.LBB4_16
.LBB4_17:                               # %j.body.prol.loopexit
                                        #   in Loop: Header=BB4_2 Depth=1
	subq	-72(%rsp), %rax                 # 8-byte Folded Reload
	cmpq	$-4, %rax
	ja	.LBB4_20
# %bb.18:                               # %j.body.preheader55
                                        #   in Loop: Header=BB4_2 Depth=1
	movq	-72(%rsp), %rax                 # 8-byte Reload
	subq	%r8, %rax
	movq	-8(%rsp), %rcx                  # 8-byte Reload
	leaq	(%rcx,%r8,8), %rcx
	movq	-16(%rsp), %rdx                 # 8-byte Reload
	leaq	(%rdx,%r8,8), %rdx
	movq	-24(%rsp), %r13                 # 8-byte Reload
	leaq	(%r13,%r8,8), %rbp
	movq	-48(%rsp), %r13                 # 8-byte Reload
	leaq	(%r13,%r8,8), %r13
	xorl	%r8d, %r8d
	.p2align	4, 0x90
.LBB4_19:                               # %j.body
                                        #   Parent Loop BB4_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%r9,%rsi,8), %xmm0             # xmm0 = mem[0],zero
	vmulsd	-24(%rbp,%r8,8), %xmm0, %xmm0
	vaddsd	-16(%r13,%r8,8), %xmm0, %xmm0
	vmovsd	(%r11,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	-24(%rdx,%r8,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, -16(%r13,%r8,8)
	vmulsd	(%r15,%rsi,8), %xmm0, %xmm0
	vaddsd	-24(%rcx,%r8,8), %xmm0, %xmm0
	vmovsd	%xmm0, -24(%rcx,%r8,8)
	vmovsd	(%r9,%rsi,8), %xmm0             # xmm0 = mem[0],zero
	vmulsd	-16(%rbp,%r8,8), %xmm0, %xmm0
	vaddsd	-8(%r13,%r8,8), %xmm0, %xmm0
	vmovsd	(%r11,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	-16(%rdx,%r8,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, -8(%r13,%r8,8)
	vmulsd	(%r15,%rsi,8), %xmm0, %xmm0
	vaddsd	-16(%rcx,%r8,8), %xmm0, %xmm0
	vmovsd	%xmm0, -16(%rcx,%r8,8)
	vmovsd	(%r9,%rsi,8), %xmm0             # xmm0 = mem[0],zero
	vmulsd	-8(%rbp,%r8,8), %xmm0, %xmm0
	vaddsd	(%r13,%r8,8), %xmm0, %xmm0
	vmovsd	(%r11,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	-8(%rdx,%r8,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, (%r13,%r8,8)
	vmulsd	(%r15,%rsi,8), %xmm0, %xmm0
	vaddsd	-8(%rcx,%r8,8), %xmm0, %xmm0
	vmovsd	%xmm0, -8(%rcx,%r8,8)
	vmovsd	(%r9,%rsi,8), %xmm0             # xmm0 = mem[0],zero
	vmulsd	(%rbp,%r8,8), %xmm0, %xmm0
	vaddsd	8(%r13,%r8,8), %xmm0, %xmm0
	vmovsd	(%r11,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	(%rdx,%r8,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, 8(%r13,%r8,8)
	vmulsd	(%r15,%rsi,8), %xmm0, %xmm0
	vaddsd	(%rcx,%r8,8), %xmm0, %xmm0
	vmovsd	%xmm0, (%rcx,%r8,8)
	addq	$4, %r8
	cmpq	%r8, %rax
	jne	.LBB4_19
	jmp	.LBB4_20
.LBB4_21:                               # %i.exit
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
	vzeroupper
	retq
.Lfunc_end4:
	.size	gemver.parfor3, .Lfunc_end4-gemver.parfor3
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function gemver.parfor4.atomic
	.type	gemver.parfor4.atomic,@function
gemver.parfor4.atomic:                  # @gemver.parfor4.atomic
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB5_9
# %bb.1:                                # %j.header.preheader.lr.ph
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	movq	8(%rdi), %rcx
	movq	16(%rdi), %r9
	movq	24(%rdi), %r10
	movq	32(%rdi), %r11
	movq	40(%rdi), %rbx
	movq	48(%rdi), %r14
	movq	56(%rdi), %r15
	movq	80(%rdi), %r12
	imulq	64(%rdi), %r8
	addq	72(%rdi), %r8
	jmp	.LBB5_2
	.p2align	4, 0x90
.LBB5_7:                                # %j.exit
                                        #   in Loop: Header=BB5_2 Depth=1
	incq	%rsi
	cmpq	%rdx, %rsi
	je	.LBB5_8
.LBB5_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB5_4 Depth 2
                                        #       Child Loop BB5_5 Depth 3
	testq	%rcx, %rcx
	jle	.LBB5_7
# %bb.3:                                # %j.body.lr.ph
                                        #   in Loop: Header=BB5_2 Depth=1
	movq	%rsi, %rax
	imulq	%r10, %rax
	leaq	(%r9,%rax,8), %rdi
	xorl	%r13d, %r13d
	.p2align	4, 0x90
.LBB5_4:                                # %j.body
                                        #   Parent Loop BB5_2 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB5_5 Depth 3
	vmovsd	(%r11,%rsi,8), %xmm0            # xmm0 = mem[0],zero
	vmulsd	(%rbx,%r13,8), %xmm0, %xmm0
	vaddsd	(%rdi,%r13,8), %xmm0, %xmm0
	vmovsd	(%r14,%rsi,8), %xmm1            # xmm1 = mem[0],zero
	vmulsd	(%r15,%r13,8), %xmm1, %xmm1
	vaddsd	%xmm1, %xmm0, %xmm0
	vmovsd	%xmm0, (%rdi,%r13,8)
	vmulsd	(%r12,%rsi,8), %xmm0, %xmm0
	vmovsd	(%r8,%r13,8), %xmm1             # xmm1 = mem[0],zero
	.p2align	4, 0x90
.LBB5_5:                                # %atomicrmw.start
                                        #   Parent Loop BB5_2 Depth=1
                                        #     Parent Loop BB5_4 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vaddsd	%xmm0, %xmm1, %xmm2
	vmovq	%xmm2, %rbp
	vmovq	%xmm1, %rax
	lock		cmpxchgq	%rbp, (%r8,%r13,8)
	vmovq	%rax, %xmm1
	jne	.LBB5_5
# %bb.6:                                # %atomicrmw.end
                                        #   in Loop: Header=BB5_4 Depth=2
	incq	%r13
	cmpq	%rcx, %r13
	jne	.LBB5_4
	jmp	.LBB5_7
.LBB5_8:
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
.LBB5_9:                                # %i.exit
	retq
.Lfunc_end5:
	.size	gemver.parfor4.atomic, .Lfunc_end5-gemver.parfor4.atomic
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function gemver.combine5
	.type	gemver.combine5,@function
gemver.combine5:                        # @gemver.combine5
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
	.size	gemver.combine5, .Lfunc_end6-gemver.combine5
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function gemver.parfor6
	.type	gemver.parfor6,@function
gemver.parfor6:                         # @gemver.parfor6
# %bb.0:                                # %entry
	movq	%rdx, %r8
	subq	%rsi, %r8
	jle	.LBB7_15
# %bb.1:                                # %iter.check
	pushq	%r14
	pushq	%rbx
	vmovsd	8(%rdi), %xmm0                  # xmm0 = mem[0],zero
	movq	16(%rdi), %rax
	movq	24(%rdi), %rcx
	movq	32(%rdi), %rdi
	cmpq	$4, %r8
	jae	.LBB7_3
# %bb.2:
	movq	%rsi, %r10
	jmp	.LBB7_13
.LBB7_3:                                # %vector.main.loop.iter.check
	cmpq	$8, %r8
	jae	.LBB7_8
# %bb.4:
	xorl	%r9d, %r9d
.LBB7_5:                                # %vec.epilog.ph
	movq	%r8, %r11
	andq	$-4, %r11
	leaq	(%r11,%rsi), %r10
	vbroadcastsd	%xmm0, %ymm1
	leaq	(%rdi,%rsi,8), %rbx
	leaq	(%rcx,%rsi,8), %r14
	leaq	(%rax,%rsi,8), %rsi
	.p2align	4, 0x90
.LBB7_6:                                # %vec.epilog.vector.body
                                        # =>This Inner Loop Header: Depth=1
	vmulpd	(%rsi,%r9,8), %ymm1, %ymm2
	vaddpd	(%r14,%r9,8), %ymm2, %ymm2
	vaddpd	(%rbx,%r9,8), %ymm2, %ymm2
	vmovupd	%ymm2, (%rbx,%r9,8)
	addq	$4, %r9
	cmpq	%r9, %r11
	jne	.LBB7_6
# %bb.7:                                # %vec.epilog.middle.block
	cmpq	%r11, %r8
	jne	.LBB7_13
	jmp	.LBB7_14
.LBB7_8:                                # %vector.ph
	movq	%r8, %r9
	andq	$-8, %r9
	vbroadcastsd	%xmm0, %zmm1
	leaq	(%rax,%rsi,8), %r10
	leaq	(%rcx,%rsi,8), %r11
	leaq	(%rdi,%rsi,8), %rbx
	xorl	%r14d, %r14d
	.p2align	4, 0x90
.LBB7_9:                                # %vector.body
                                        # =>This Inner Loop Header: Depth=1
	vmulpd	(%r10,%r14,8), %zmm1, %zmm2
	vaddpd	(%r11,%r14,8), %zmm2, %zmm2
	vaddpd	(%rbx,%r14,8), %zmm2, %zmm2
	vmovupd	%zmm2, (%rbx,%r14,8)
	addq	$8, %r14
	cmpq	%r14, %r9
	jne	.LBB7_9
# %bb.10:                               # %middle.block
	cmpq	%r9, %r8
	je	.LBB7_14
# %bb.11:                               # %vec.epilog.iter.check
	testb	$4, %r8b
	jne	.LBB7_5
# %bb.12:
	addq	%rsi, %r9
	movq	%r9, %r10
	.p2align	4, 0x90
.LBB7_13:                               # %i.body
                                        # =>This Inner Loop Header: Depth=1
	vmulsd	(%rax,%r10,8), %xmm0, %xmm1
	vaddsd	(%rcx,%r10,8), %xmm1, %xmm1
	vaddsd	(%rdi,%r10,8), %xmm1, %xmm1
	vmovsd	%xmm1, (%rdi,%r10,8)
	incq	%r10
	cmpq	%r10, %rdx
	jne	.LBB7_13
.LBB7_14:
	popq	%rbx
	popq	%r14
.LBB7_15:                               # %i.exit
	vzeroupper
	retq
.Lfunc_end7:
	.size	gemver.parfor6, .Lfunc_end7-gemver.parfor6
                                        # -- End function
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0                          # -- Begin function gemver.parfor7
.LCPI8_0:
	.quad	0x8000000000000000              # double -0
	.section	.rodata.cst32,"aM",@progbits,32
	.p2align	5, 0x0
.LCPI8_1:
	.zero	8
	.quad	0x8000000000000000              # double -0
	.quad	0x8000000000000000              # double -0
	.quad	0x8000000000000000              # double -0
	.text
	.p2align	4, 0x90
	.type	gemver.parfor7,@function
gemver.parfor7:                         # @gemver.parfor7
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB8_17
# %bb.1:                                # %j.header.preheader.lr.ph
	pushq	%r15
	pushq	%r14
	pushq	%rbx
	movq	8(%rdi), %rbx
	movq	16(%rdi), %rax
	movq	24(%rdi), %rcx
	movq	32(%rdi), %r8
	vmovsd	40(%rdi), %xmm0                 # xmm0 = mem[0],zero
	movq	48(%rdi), %rdi
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
	vmovsd	.LCPI8_0(%rip), %xmm1           # xmm1 = [-0.0E+0,0.0E+0]
	vbroadcastsd	.LCPI8_0(%rip), %ymm2   # ymm2 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	vbroadcastsd	.LCPI8_0(%rip), %zmm3   # zmm3 = [-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0,-0.0E+0]
	jmp	.LBB8_2
	.p2align	4, 0x90
.LBB8_15:                               # %j.exit
                                        #   in Loop: Header=BB8_2 Depth=1
	vmulsd	%xmm4, %xmm0, %xmm4
	vaddsd	(%rdi,%rsi,8), %xmm4, %xmm4
	vmovsd	%xmm4, (%rdi,%rsi,8)
	incq	%rsi
	addq	%rax, %r11
	addq	%rax, %rbx
	cmpq	%rdx, %rsi
	je	.LBB8_16
.LBB8_2:                                # %j.header.preheader
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB8_8 Depth 2
                                        #     Child Loop BB8_12 Depth 2
                                        #     Child Loop BB8_14 Depth 2
	vmovapd	%xmm1, %xmm4
	testq	%rcx, %rcx
	jle	.LBB8_15
# %bb.3:                                # %iter.check
                                        #   in Loop: Header=BB8_2 Depth=1
	cmpq	$4, %rcx
	jae	.LBB8_5
# %bb.4:                                #   in Loop: Header=BB8_2 Depth=1
	xorl	%r14d, %r14d
	vmovapd	%xmm1, %xmm4
	jmp	.LBB8_14
	.p2align	4, 0x90
.LBB8_5:                                # %vector.main.loop.iter.check
                                        #   in Loop: Header=BB8_2 Depth=1
	cmpq	$32, %rcx
	jae	.LBB8_7
# %bb.6:                                #   in Loop: Header=BB8_2 Depth=1
	vmovapd	%xmm1, %xmm4
	xorl	%r15d, %r15d
	jmp	.LBB8_11
.LBB8_7:                                # %vector.body.preheader
                                        #   in Loop: Header=BB8_2 Depth=1
	xorl	%r14d, %r14d
	vmovapd	%zmm3, %zmm4
	vmovapd	%zmm3, %zmm5
	vmovapd	%zmm3, %zmm6
	vmovapd	%zmm3, %zmm7
	.p2align	4, 0x90
.LBB8_8:                                # %vector.body
                                        #   Parent Loop BB8_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	-192(%r11,%r14,8), %zmm8
	vmovupd	-128(%r11,%r14,8), %zmm9
	vmovupd	-64(%r11,%r14,8), %zmm10
	vmovupd	(%r11,%r14,8), %zmm11
	vmulpd	(%r8,%r14,8), %zmm8, %zmm8
	vaddpd	%zmm8, %zmm4, %zmm4
	vmulpd	64(%r8,%r14,8), %zmm9, %zmm8
	vaddpd	%zmm8, %zmm5, %zmm5
	vmulpd	128(%r8,%r14,8), %zmm10, %zmm8
	vaddpd	%zmm8, %zmm6, %zmm6
	vmulpd	192(%r8,%r14,8), %zmm11, %zmm8
	vaddpd	%zmm8, %zmm7, %zmm7
	addq	$32, %r14
	cmpq	%r14, %r10
	jne	.LBB8_8
# %bb.9:                                # %middle.block
                                        #   in Loop: Header=BB8_2 Depth=1
	vaddpd	%zmm4, %zmm5, %zmm4
	vaddpd	%zmm4, %zmm6, %zmm4
	vaddpd	%zmm4, %zmm7, %zmm4
	vextractf64x4	$1, %zmm4, %ymm5
	vaddpd	%zmm5, %zmm4, %zmm4
	vextractf128	$1, %ymm4, %xmm5
	vaddpd	%xmm5, %xmm4, %xmm4
	vshufpd	$1, %xmm4, %xmm4, %xmm5         # xmm5 = xmm4[1,0]
	vaddsd	%xmm5, %xmm4, %xmm4
	cmpq	%r10, %rcx
	je	.LBB8_15
# %bb.10:                               # %vec.epilog.iter.check
                                        #   in Loop: Header=BB8_2 Depth=1
	movq	%r10, %r14
	movq	%r10, %r15
	testb	$28, %cl
	je	.LBB8_14
.LBB8_11:                               # %vec.epilog.ph
                                        #   in Loop: Header=BB8_2 Depth=1
	vblendpd	$14, %ymm2, %ymm4, %ymm4        # ymm4 = ymm4[0],ymm2[1,2,3]
	.p2align	4, 0x90
.LBB8_12:                               # %vec.epilog.vector.body
                                        #   Parent Loop BB8_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovupd	(%rbx,%r15,8), %ymm5
	vmulpd	(%r8,%r15,8), %ymm5, %ymm5
	vaddpd	%ymm5, %ymm4, %ymm4
	addq	$4, %r15
	cmpq	%r15, %r9
	jne	.LBB8_12
# %bb.13:                               # %vec.epilog.middle.block
                                        #   in Loop: Header=BB8_2 Depth=1
	vextractf128	$1, %ymm4, %xmm5
	vaddpd	%xmm5, %xmm4, %xmm4
	vshufpd	$1, %xmm4, %xmm4, %xmm5         # xmm5 = xmm4[1,0]
	vaddsd	%xmm5, %xmm4, %xmm4
	movq	%r9, %r14
	cmpq	%r9, %rcx
	je	.LBB8_15
	.p2align	4, 0x90
.LBB8_14:                               # %j.body
                                        #   Parent Loop BB8_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
	vmovsd	(%rbx,%r14,8), %xmm5            # xmm5 = mem[0],zero
	vmulsd	(%r8,%r14,8), %xmm5, %xmm5
	vaddsd	%xmm5, %xmm4, %xmm4
	incq	%r14
	cmpq	%r14, %rcx
	jne	.LBB8_14
	jmp	.LBB8_15
.LBB8_16:
	popq	%rbx
	popq	%r14
	popq	%r15
.LBB8_17:                               # %i.exit
	vzeroupper
	retq
.Lfunc_end8:
	.size	gemver.parfor7, .Lfunc_end8-gemver.parfor7
                                        # -- End function
	.type	.Lcheck.message,@object         # @check.message
	.section	.rodata.str1.1,"aMS",@progbits,1
.Lcheck.message:
	.asciz	"shapes ({}) and ({}, {}) not aligned in `dot(arg7, arg0)` (at {@1}): {} (dim 0) != {} (dim 0)"
	.size	.Lcheck.message, 94

	.type	.Lcheck.message.1,@object       # @check.message.1
.Lcheck.message.1:
	.asciz	"operands could not be broadcast together in `(arg10 * dot(arg7, arg0)) + arg8`: shapes ({}) and ({})"
	.size	.Lcheck.message.1, 101

	.type	.Lcheck.message.2,@object       # @check.message.2
.Lcheck.message.2:
	.asciz	"could not broadcast the value into the target in `arg1 += (...)`: shapes ({}) and ({})"
	.size	.Lcheck.message.2, 87

	.type	.Lalloc.name,@object            # @alloc.name
.Lalloc.name:
	.asciz	"dot"
	.size	.Lalloc.name, 4

	.type	.Ldot.identity,@object          # @dot.identity
	.section	.rodata.cst8,"aM",@progbits,8
	.p2align	3, 0x0
.Ldot.identity:
	.quad	0x8000000000000000              # double -0
	.size	.Ldot.identity, 8

	.type	.Lcheck.message.3,@object       # @check.message.3
	.section	.rodata.str1.1,"aMS",@progbits,1
.Lcheck.message.3:
	.asciz	"could not broadcast the value into the target in `arg2 += arg9 * dot(arg0, arg1)`: shapes ({}) and ({})"
	.size	.Lcheck.message.3, 104

	.section	".note.GNU-stack","",@progbits
