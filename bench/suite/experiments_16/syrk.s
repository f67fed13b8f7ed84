	.text
	.file	"syrk"
	.globl	kiln_entry_syrk                 # -- Begin function kiln_entry_syrk
	.p2align	4, 0x90
	.type	kiln_entry_syrk,@function
kiln_entry_syrk:                        # @kiln_entry_syrk
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
	.size	kiln_entry_syrk, .Lfunc_end0-kiln_entry_syrk
                                        # -- End function
	.p2align	4, 0x90                         # -- Begin function syrk.parfor0
	.type	syrk.parfor0,@function
syrk.parfor0:                           # @syrk.parfor0
# %bb.0:                                # %entry
	cmpq	%rdx, %rsi
	jge	.LBB1_13
# %bb.1:                                # %i.body.lr.ph
	pushq	%rbp
	pushq	%r15
	pushq	%r14
	pushq	%r13
	pushq	%r12
	pushq	%rbx
	movq	8(%rdi), %r9
	movq	16(%rdi), %rcx
	movq	24(%rdi), %r8
	movq	32(%rdi), %rax
	movq	%rax, -16(%rsp)                 # 8-byte Spill
	movq	40(%rdi), %rax
	movq	%rax, -24(%rsp)                 # 8-byte Spill
	vmovsd	48(%rdi), %xmm0                 # xmm0 = mem[0],zero
	vmovsd	56(%rdi), %xmm1                 # xmm1 = mem[0],zero
	movl	%r8d, %edi
	andl	$7, %edi
	movabsq	$9223372036854775800, %r11      # imm = 0x7FFFFFFFFFFFFFF8
	andq	%r8, %r11
	movq	%rcx, %rax
	imulq	%rsi, %rax
	leaq	56(%r9,%rax,8), %rbx
	shlq	$3, %rcx
	leaq	56(%r9), %r10
	movq	%r10, -32(%rsp)                 # 8-byte Spill
	movq	%r9, -8(%rsp)                   # 8-byte Spill
	leaq	(%r9,%rax,8), %r15
	jmp	.LBB1_3
	.p2align	4, 0x90
.LBB1_2:                                # %i.header.loopexit
                                        #   in Loop: Header=BB1_3 Depth=1
	incq	%rsi
	addq	%rcx, %rbx
	addq	%rcx, %r15
	cmpq	%rdx, %rsi
	je	.LBB1_12
.LBB1_3:                                # %i.body
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB1_5 Depth 2
                                        #       Child Loop BB1_7 Depth 3
                                        #       Child Loop BB1_10 Depth 3
	testq	%rsi, %rsi
	js	.LBB1_2
# %bb.4:                                # %i.header5.preheader.lr.ph
                                        #   in Loop: Header=BB1_3 Depth=1
	movq	%rsi, %rax
	imulq	-24(%rsp), %rax                 # 8-byte Folded Reload
	movq	-16(%rsp), %r9                  # 8-byte Reload
	leaq	(%r9,%rax,8), %r12
	movq	-8(%rsp), %r13                  # 8-byte Reload
	movq	-32(%rsp), %rbp                 # 8-byte Reload
	xorl	%r9d, %r9d
	jmp	.LBB1_5
	.p2align	4, 0x90
.LBB1_11:                               # %i.exit7
                                        #   in Loop: Header=BB1_5 Depth=2
	vmulsd	%xmm2, %xmm1, %xmm2
	vmulsd	(%r12,%r9,8), %xmm0, %xmm3
	vaddsd	%xmm3, %xmm2, %xmm2
	vmovsd	%xmm2, (%r12,%r9,8)
	leaq	1(%r9), %rax
	addq	%rcx, %rbp
	addq	%rcx, %r13
	cmpq	%rsi, %r9
	movq	%rax, %r9
	je	.LBB1_2
.LBB1_5:                                # %i.header5.preheader
                                        #   Parent Loop BB1_3 Depth=1
                                        # =>  This Loop Header: Depth=2
                                        #       Child Loop BB1_7 Depth 3
                                        #       Child Loop BB1_10 Depth 3
	vxorpd	%xmm2, %xmm2, %xmm2
	testq	%r8, %r8
	jle	.LBB1_11
# %bb.6:                                # %i.body6.lr.ph
                                        #   in Loop: Header=BB1_5 Depth=2
	xorl	%r10d, %r10d
	cmpq	$8, %r8
	jb	.LBB1_8
	.p2align	4, 0x90
.LBB1_7:                                # %i.body6
                                        #   Parent Loop BB1_3 Depth=1
                                        #     Parent Loop BB1_5 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmovsd	-56(%rbx,%r10,8), %xmm3         # xmm3 = mem[0],zero
	vmovsd	-48(%rbx,%r10,8), %xmm4         # xmm4 = mem[0],zero
	vmulsd	-56(%rbp,%r10,8), %xmm3, %xmm3
	vaddsd	%xmm3, %xmm2, %xmm2
	vmulsd	-48(%rbp,%r10,8), %xmm4, %xmm3
	vmovsd	-40(%rbx,%r10,8), %xmm4         # xmm4 = mem[0],zero
	vmulsd	-40(%rbp,%r10,8), %xmm4, %xmm4
	vaddsd	%xmm3, %xmm2, %xmm2
	vaddsd	%xmm4, %xmm2, %xmm2
	vmovsd	-32(%rbx,%r10,8), %xmm3         # xmm3 = mem[0],zero
	vmulsd	-32(%rbp,%r10,8), %xmm3, %xmm3
	vaddsd	%xmm3, %xmm2, %xmm2
	vmovsd	-24(%rbx,%r10,8), %xmm3         # xmm3 = mem[0],zero
	vmulsd	-24(%rbp,%r10,8), %xmm3, %xmm3
	vmovsd	-16(%rbx,%r10,8), %xmm4         # xmm4 = mem[0],zero
	vmulsd	-16(%rbp,%r10,8), %xmm4, %xmm4
	vaddsd	%xmm3, %xmm2, %xmm2
	vaddsd	%xmm4, %xmm2, %xmm2
	vmovsd	-8(%rbx,%r10,8), %xmm3          # xmm3 = mem[0],zero
	vmulsd	-8(%rbp,%r10,8), %xmm3, %xmm3
	vaddsd	%xmm3, %xmm2, %xmm2
	vmovsd	(%rbx,%r10,8), %xmm3            # xmm3 = mem[0],zero
	vmulsd	(%rbp,%r10,8), %xmm3, %xmm3
	vaddsd	%xmm3, %xmm2, %xmm2
	addq	$8, %r10
	cmpq	%r10, %r11
	jne	.LBB1_7
.LBB1_8:                                # %i.exit7.loopexit.unr-lcssa
                                        #   in Loop: Header=BB1_5 Depth=2
	testq	%rdi, %rdi
	je	.LBB1_11
# %bb.9:                                # %i.body6.epil.preheader
                                        #   in Loop: Header=BB1_5 Depth=2
	leaq	(%r13,%r10,8), %r14
	leaq	(%r15,%r10,8), %r10
	xorl	%eax, %eax
	.p2align	4, 0x90
.LBB1_10:                               # %i.body6.epil
                                        #   Parent Loop BB1_3 Depth=1
                                        #     Parent Loop BB1_5 Depth=2
                                        # =>    This Inner Loop Header: Depth=3
	vmovsd	(%r10,%rax,8), %xmm3            # xmm3 = mem[0],zero
	vmulsd	(%r14,%rax,8), %xmm3, %xmm3
	vaddsd	%xmm3, %xmm2, %xmm2
	incq	%rax
	cmpq	%rax, %rdi
	jne	.LBB1_10
	jmp	.LBB1_11
.LBB1_12:
	popq	%rbx
	popq	%r12
	popq	%r13
	popq	%r14
	popq	%r15
	popq	%rbp
.LBB1_13:                               # %i.exit
	retq
.Lfunc_end1:
	.size	syrk.parfor0, .Lfunc_end1-syrk.parfor0
                                        # -- End function
	.section	".note.GNU-stack","",@progbits
